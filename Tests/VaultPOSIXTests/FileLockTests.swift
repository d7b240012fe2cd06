import Foundation
import Testing
import VaultPOSIX

@Suite("flock in one place")
struct FileLockTests {
    /// A fresh lock file; two `open`s of it are two holders, as two processes would be (flock is per open file).
    static func lockFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("vault-posix-\(UUID().uuidString).lock").path
    }

    @Test("a second holder finds the lock taken until the first unlocks")
    func secondHolderWaits() {
        let path = Self.lockFile()
        defer { unlink(path) }
        let first = FileLock.open(path)
        let second = FileLock.open(path)
        defer {
            close(first)
            close(second)
        }
        #expect(first >= 0 && second >= 0)
        #expect(FileLock.tryExclusive(first) == .acquired)
        #expect(FileLock.tryExclusive(second) == .taken)
        FileLock.unlock(first)
        #expect(FileLock.tryExclusive(second) == .acquired)
    }

    @Test("a wait whose deadline passes ends with the lock still taken")
    func waitEndsAtTheDeadline() {
        let path = Self.lockFile()
        defer { unlink(path) }
        let first = FileLock.open(path)
        let second = FileLock.open(path)
        defer {
            close(first)
            close(second)
        }
        #expect(FileLock.tryExclusive(first) == .acquired)
        #expect(FileLock.waitExclusive(second, until: .now + .milliseconds(5)) == .taken)
    }

    @Test("a descriptor that is no file fails with its error number")
    func failure() {
        #expect(FileLock.tryExclusive(-1) == .failed(errorNumber: EBADF))
    }
}
