import Foundation
import KeyServiceCore
import VaultCrypto
import VaultPOSIX

/// A directory of secret files: `pepper-N` (one per pepper version) and `signing-seed`, 32 bytes each.
///
/// The directory must be mode 700 and this user's, every file mode 600 (or 400) and this user's, and no file is
/// ever replaced: a lost pepper makes every key under it unusable.
struct SecretsDirectory {
    let path: String

    static let seedName = "signing-seed"
    static let pepperPrefix = "pepper-"
    static let secretLength = 32

    /// The peppers by version and the seed; on a missing or empty directory and `mayCreate`, a new pepper-1 and
    /// signing-seed first.
    func load(mayCreate: Bool) throws -> (peppers: [Int: SecureBytes], seed: SecureBytes) {
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            guard mayCreate else { throw KeyServiceError("the secrets directory \(path) does not exist") }
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        try checkDirectory()
        var versions = try pepperVersions()
        let entries = try FileManager.default.contentsOfDirectory(atPath: path)
        if entries.isEmpty {
            guard mayCreate else { throw KeyServiceError("the secrets directory \(path) is empty") }
            try create(SecureBytes.random(count: Self.secretLength), name: Self.pepperPrefix + "1")
            try create(SecureBytes.random(count: Self.secretLength), name: Self.seedName)
            versions = [1]
        }
        guard !versions.isEmpty else {
            throw KeyServiceError("the secrets directory \(path) holds no pepper-N file, but is not empty")
        }
        var peppers: [Int: SecureBytes] = [:]
        for version in versions {
            peppers[version] = try readSecret(Self.pepperPrefix + "\(version)")
        }
        return (peppers, try readSecret(Self.seedName))
    }

    /// Writes the next pepper version's file and returns the version.
    func addPepper() throws -> Int {
        try checkDirectory()
        let version = (try pepperVersions().max() ?? 0) + 1
        try create(SecureBytes.random(count: Self.secretLength), name: Self.pepperPrefix + "\(version)")
        return version
    }

    private func pepperVersions() throws -> [Int] {
        try FileManager.default.contentsOfDirectory(atPath: path).compactMap { name in
            guard name.hasPrefix(Self.pepperPrefix), let version = Int(name.dropFirst(Self.pepperPrefix.count)),
                version >= 1
            else { return nil }
            return version
        }
        .sorted()
    }

    private func checkDirectory() throws {
        let info = try status(path, what: "the secrets directory")
        guard info.kind == .directory else { throw KeyServiceError("the secrets directory \(path) is not a directory") }
        guard info.owner == geteuid() else {
            throw KeyServiceError("the secrets directory \(path) belongs to uid \(info.owner), not to this user")
        }
        let mode = info.permissions & 0o777
        guard mode & 0o077 == 0 else {
            throw KeyServiceError(
                "the secrets directory \(path) has mode \(String(mode, radix: 8)): others may enter it; run chmod 700"
            )
        }
    }

    private func status(_ path: String, what: String) throws -> FileStatus {
        do throws(FileStatus.Failure) {
            return try FileStatus(path: path, followingSymbolicLinks: false)
        } catch {
            throw KeyServiceError("cannot read \(what) \(path): \(String(cString: strerror(error.errorNumber)))")
        }
    }

    /// Reads one secret file after checking it is a regular file of this user's that nobody else may read.
    private func readSecret(_ name: String) throws -> SecureBytes {
        let file = path + "/" + name
        let info = try status(file, what: "the secret file")
        guard info.kind == .regularFile else { throw KeyServiceError("the secret file \(file) is not a regular file") }
        guard info.owner == geteuid() else {
            throw KeyServiceError("the secret file \(file) belongs to uid \(info.owner), not to this user: refused")
        }
        let mode = info.permissions & 0o777
        guard mode & 0o077 == 0 else {
            throw KeyServiceError(
                "the secret file \(file) has mode \(String(mode, radix: 8)): others may read it; refused. Run "
                    + "chmod 600 on it (and consider the secret exposed)"
            )
        }
        let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw KeyServiceError("cannot read the secret file \(file): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        // One byte more than expected, to tell a longer file from a whole one.
        var buffer = [UInt8](repeating: 0, count: Self.secretLength + 1)
        defer { for index in buffer.indices { buffer[index] = 0 } }
        var count = 0
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else {
                throw KeyServiceError("cannot read the secret file \(file): \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            count += got
        }
        guard count == Self.secretLength else {
            throw KeyServiceError("the secret file \(file) is not \(Self.secretLength) bytes: it is damaged")
        }
        return SecureBytes(buffer[0..<count])
    }

    /// Writes a new secret file: mode 600, never over an existing one, synced with its directory.
    private func create(_ secret: SecureBytes, name: String) throws {
        let file = path + "/" + name
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw KeyServiceError("cannot create the secret file \(file): \(String(cString: strerror(errno)))")
        }
        var bytes = [UInt8](secret.copyToData())
        defer { for index in bytes.indices { bytes[index] = 0 } }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            close(descriptor)
            unlink(file)
            throw KeyServiceError("cannot write the secret file \(file)")
        }
        close(descriptor)
        let directory = open(path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }
}
