import Foundation
import KeyServiceMock
import VaultTestSupport

/// A small tmpfs mounted for one test, where the machine allows it (root with CAP_SYS_ADMIN): a disk that fills
/// up for real, and that can be remounted read-only, which even root cannot write.
struct Tmpfs {
    let mountPoint: URL

    /// Mounts a tmpfs of `size` (mount's syntax: `256k`) at `mountPoint` (created), or says why it cannot.
    static func mount(at mountPoint: URL, size: String) async throws -> Result<Tmpfs, FixtureError> {
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let status = try await run(
            "/bin/mount",
            ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", mountPoint.path]
        )
        guard status.code == 0 else { return .failure(FixtureError("mount -t tmpfs failed: \(status.errors)")) }
        return .success(Tmpfs(mountPoint: mountPoint))
    }

    /// Remounts it read-only, or writable again.
    func remount(readOnly: Bool) async throws {
        let status = try await Self.run("/bin/mount", ["-o", readOnly ? "remount,ro" : "remount,rw", mountPoint.path])
        guard status.code == 0 else { throw FixtureError("remount failed: \(status.errors)") }
    }

    /// Unmounts it (lazily, so a file a child still holds open cannot keep it).
    func unmount() async throws {
        _ = try await Self.run("/bin/umount", ["-l", mountPoint.path])
    }

    /// Writes to `name` on it until the disk is full.
    func fill(_ name: String) async throws {
        let path = mountPoint.appending(path: name).path
        try await onOwnThread {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0 else { throw FixtureError("cannot create \(path)") }
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0x55, count: 4096)
            while true {
                let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    guard errno == ENOSPC else { throw FixtureError("filling \(path) failed with errno \(errno)") }
                    return
                }
            }
        }
    }

    private static func run(_ tool: String, _ arguments: [String]) async throws -> (code: Int32, errors: String) {
        let run = try await TestProcess.run([tool] + arguments)
        return (run.termination.status, run.errorText.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
