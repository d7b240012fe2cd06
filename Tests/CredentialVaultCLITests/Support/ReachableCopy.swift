import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A copy of an executable that another user (uid 65534) can run: in a fresh 0755 directory under the system's
/// temporary directory, mode 0755. The build's own copy may sit below a directory only its owner can enter (a
/// checkout made with `mktemp -d`, or under `/root`), where `exec` as another user fails with EACCES.
enum ReachableCopy {
    /// Why no such copy can be made here (a directory on the way to the temporary directory that others cannot
    /// enter); nil when it can, or when the tests do not run as root (the binary then runs as this user).
    static let unreachableReason: String? = {
        guard getuid() == 0 else { return nil }
        var directory = FileManager.default.temporaryDirectory.resolvingSymlinksInPath()
        while true {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory.path)
            let mode = (attributes?[.posixPermissions] as? NSNumber)?.intValue ?? 0
            guard mode & 0o001 != 0 else {
                return "uid 65534 cannot enter \(directory.path) (mode \(String(mode, radix: 8))) on the way to the "
                    + "temporary directory, where the test would run a copy of credential-vault as that user"
            }
            if directory.path == "/" { return nil }
            directory = directory.deletingLastPathComponent()
        }
    }()

    /// Copies `executable` into a new 0755 directory and returns the copy; the caller removes the directory.
    static func make(of executable: URL) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "credential-vault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o755]
        )
        let copy = directory.appending(path: executable.lastPathComponent)
        try FileManager.default.copyItem(at: executable, to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy.path)
        return copy
    }
}
