import Foundation
import VaultCrypto
import VaultPOSIX

/// A secret of ``StateStore/secretLength`` bytes in its own 0600 file of the state directory: the pepper
/// or the signing key's seed.
///
/// A file that exists is never replaced: one that cannot be read or has the wrong length is an error.
/// A new pepper would make every stored key unusable, and a new signing key every token issued so far.
struct SecretFile: Sendable {
    let url: URL
    /// What the file holds, for messages: `pepper`, `signing key`.
    let name: String

    /// The secret in the file; a new random one, written first, when the file is missing and `creatingIfMissing`.
    /// - Throws: ``StateError`` when the file is missing (and may not be created), unreadable or damaged.
    func load(creatingIfMissing: Bool) throws -> SecureBytes {
        do throws(FileStatus.Failure) {
            _ = try FileStatus(path: url.path, followingSymbolicLinks: false)
        } catch {
            guard error.errorNumber == ENOENT else { throw unreadable(error.errorNumber) }
            guard creatingIfMissing else {
                throw StateError(
                    "the \(name) file \(url.path) is missing, but the state directory holds a database that needs it; "
                        + "it is not replaced, because a new \(name) would make \(whatIsLost) unusable. Restore the "
                        + "file, or delete the state directory \(url.deletingLastPathComponent().path) to start over"
                )
            }
            let secret = SecureBytes.random(count: StateStore.secretLength)
            try writeSecret(secret.copyToData())
            return secret
        }
        return try readSecret()
    }

    /// Makes the file hold `secret`: writes it when missing, checks it when present.
    /// - Throws: ``StateError`` when the file holds another secret, or cannot be read or written.
    func adopt(_ secret: Data) throws {
        guard secret.count == StateStore.secretLength else {
            throw StateError(
                "the \(name) in the database is not \(StateStore.secretLength) bytes: the state is damaged"
            )
        }
        do throws(FileStatus.Failure) {
            _ = try FileStatus(path: url.path, followingSymbolicLinks: false)
        } catch {
            guard error.errorNumber == ENOENT else { throw unreadable(error.errorNumber) }
            try writeSecret(secret)
            return
        }
        guard try readSecret().copyToData() == secret else {
            throw StateError(
                "the \(name) file \(url.path) differs from the \(name) in the database: the state directory is damaged"
            )
        }
    }

    private var whatIsLost: String {
        name == "pepper" ? "every stored key" : "every token issued so far"
    }

    private func unreadable(_ error: Int32) -> StateError {
        StateError(
            "cannot read the \(name) file \(url.path): \(String(cString: strerror(error))); it is not replaced, "
                + "because a new \(name) would make \(whatIsLost) unusable"
        )
    }

    private func readSecret() throws -> SecureBytes {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw unreadable(errno) }
        defer { close(descriptor) }
        // One byte more than expected, to tell a longer file from a whole one.
        var buffer = [UInt8](repeating: 0, count: StateStore.secretLength + 1)
        var count = 0
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw unreadable(errno) }
            if got == 0 { break }
            count += got
        }
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        guard count == StateStore.secretLength else {
            throw StateError(
                "the \(name) file \(url.path) is not \(StateStore.secretLength) bytes: the state directory is damaged; "
                    + "it is not replaced, because a new \(name) would make \(whatIsLost) unusable"
            )
        }
        return SecureBytes(buffer[0..<count])
    }

    /// Writes the file atomically: a 0600 temporary file, synced, renamed over the name, the directory synced.
    private func writeSecret(_ secret: Data) throws {
        let temporary = url.path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw cannotWrite(temporary, errno) }
        let written = secret.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        let writeError = errno
        guard written == secret.count else {
            close(descriptor)
            throw cannotWrite(temporary, written < 0 ? writeError : ENOSPC)
        }
        guard fsync(descriptor) == 0 else {
            let error = errno
            close(descriptor)
            throw cannotWrite(temporary, error)
        }
        close(descriptor)
        guard rename(temporary, url.path) == 0 else { throw cannotWrite(url.path, errno) }
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    private func cannotWrite(_ path: String, _ error: Int32) -> StateError {
        StateError("cannot write the \(name) file \(path): \(String(cString: strerror(error)))")
    }
}
