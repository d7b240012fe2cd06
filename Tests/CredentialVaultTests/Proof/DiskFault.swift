import CredentialVault
import Foundation
import KeyServiceMock

/// Issue 15's disk faults, each laid on a fresh store: a write under the fault must fail with a clear typed error,
/// and the previous envelope must still open with the password afterwards.
///
/// Root ignores mode bits, and tests run as root here and in CI, so two faults are made where the machine allows:
/// a read-only directory and a full disk on a small tmpfs (remounted read-only; filled up) when `mount -t tmpfs`
/// works, else a read-only directory by mode 0500 for a child run as uid 65534 (root) or for this process
/// (another user), and a full disk by RLIMIT_FSIZE in a child (EFBIG where a disk says ENOSPC).
enum DiskFault: String, CaseIterable {
    case readOnlyDirectory = "read-only directory"
    case directoryTooOpen = "directory mode 0755"
    case envelopeTooOpen = "envelope mode 0644"
    case truncatedEnvelope = "truncated envelope"
    case zeroLengthEnvelope = "zero-length envelope"
    case fullDisk = "full disk"
    case lockHeld = "session lock held by another process"
    case fileLockHeld = "file lock held by another process"

    /// Runs the fault under `root` (a folder of its own), with a tmpfs when `tmpfs` (mount works here). `planted`
    /// (the full disk only) has the planted in-place writer try the write instead of the library.
    func run(_ fixture: VaultFixture, root: URL, tmpfs: Bool, planted: Bool = false) async throws -> DiskFaultReport {
        let base = root.appending(path: rawValue.replacingOccurrences(of: " ", with: "-"))
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        switch self {
        case .readOnlyDirectory: return try await readOnlyDirectory(fixture, base: base, tmpfs: tmpfs)
        case .directoryTooOpen, .envelopeTooOpen: return try await tooOpen(fixture, base: base)
        case .truncatedEnvelope, .zeroLengthEnvelope: return try await damaged(fixture, base: base)
        case .fullDisk: return try await fullDisk(fixture, base: base, tmpfs: tmpfs, planted: planted)
        case .lockHeld, .fileLockHeld: return try await lockHeld(fixture, base: base)
        }
    }

    private func report(
        _ mechanism: String,
        _ outcome: DiskFaultHarness.Outcome,
        _ kind: VaultError.Kind,
        _ words: [String],
        _ refusal: String?
    ) -> DiskFaultReport {
        DiskFaultReport(
            fault: rawValue,
            mechanism: mechanism,
            outcome: outcome,
            expectedKind: kind.description,
            expectedWords: words,
            previousEnvelopeRefusal: refusal
        )
    }

    private func readOnlyDirectory(_ fixture: VaultFixture, base: URL, tmpfs: Bool) async throws -> DiskFaultReport {
        if tmpfs, case .success(let disk) = try await Tmpfs.mount(at: base.appending(path: "disk"), size: "1m") {
            do {
                let harness = try await DiskFaultHarness(fixture, directory: disk.mountPoint.appending(path: "store"))
                try await disk.remount(readOnly: true)
                let outcome = try await harness.attemptWrite(by: .library)
                try await disk.remount(readOnly: false)
                let refusal = try await harness.previousEnvelopeRefusal()
                try await disk.unmount()
                let words = ["Read-only file system", harness.directory.path]
                return report("tmpfs remounted read-only", outcome, .fileSystemFailed, words, refusal)
            } catch {
                try? await disk.unmount()
                throw error
            }
        }
        let harness = try await DiskFaultHarness(fixture, directory: base.appending(path: "store"))
        let words = ["Permission denied", harness.directory.path]
        if getuid() == 0 {
            guard ProofChildProcess.canRunAsNobody else {
                throw FixtureError("root without mount or setpriv cannot make a read-only directory")
            }
            // The store belongs to uid 65534 for the fault, as the library requires of its owner; the folders
            // above it let that user through for as long.
            let root = base.deletingLastPathComponent()
            chmod(root.path, 0o711)
            chmod(base.path, 0o711)
            defer {
                chmod(base.path, 0o700)
                chmod(root.path, 0o700)
            }
            try harness.giveStore(to: 65534)
            chmod(harness.directory.path, 0o500)
            let outcome = try await harness.attemptWrite(by: .libraryInChild(.nobody, fileSizeLimit: nil))
            chmod(harness.directory.path, 0o700)
            let refusal = try await harness.previousEnvelopeRefusal(as: .nobody)
            try harness.giveStore(to: 0)
            return report("mode 0500 for a child as uid 65534", outcome, .fileSystemFailed, words, refusal)
        }
        chmod(harness.directory.path, 0o500)
        let outcome = try await harness.attemptWrite(by: .library)
        chmod(harness.directory.path, 0o700)
        let refusal = try await harness.previousEnvelopeRefusal()
        return report("mode 0500", outcome, .fileSystemFailed, words, refusal)
    }

    private func tooOpen(_ fixture: VaultFixture, base: URL) async throws -> DiskFaultReport {
        let harness = try await DiskFaultHarness(fixture, directory: base.appending(path: "store"))
        let path = try self == .directoryTooOpen ? harness.directory.path : harness.envelopeURL.path
        let (tooOpen, closed): (mode_t, mode_t) = self == .directoryTooOpen ? (0o755, 0o700) : (0o644, 0o600)
        let before = try Data(contentsOf: harness.envelopeURL)
        chmod(path, tooOpen)
        let outcome = try await harness.attemptWrite(by: .library)
        let untouched = try Data(contentsOf: harness.envelopeURL) == before
        chmod(path, closed)
        let refusal = try await harness.previousEnvelopeRefusal()
        let words = [path, String(tooOpen, radix: 8), "chmod"]
        return report("chmod", outcome, .permissionsTooOpen, words, untouched ? refusal : "it was rewritten")
    }

    /// A damaged envelope is the previous envelope: it must be refused, and left byte for byte as it was found
    /// (a person may still recover it); once its bytes are back, it opens.
    private func damaged(_ fixture: VaultFixture, base: URL) async throws -> DiskFaultReport {
        let harness = try await DiskFaultHarness(fixture, directory: base.appending(path: "store"))
        let url = try harness.envelopeURL
        let original = try Data(contentsOf: url)
        let damaged = self == .truncatedEnvelope ? original.prefix(original.count / 2) : Data()
        try damaged.write(to: url)
        let outcome = try await harness.attemptWrite(by: .library)
        let untouched = try Data(contentsOf: url) == damaged
        try original.write(to: url)
        let refusal = try await harness.previousEnvelopeRefusal()
        let words = [url.lastPathComponent, "damaged"]
        let mechanism = self == .truncatedEnvelope ? "cut to \(damaged.count) of \(original.count) bytes" : "0 bytes"
        return report(mechanism, outcome, .damagedRecord, words, untouched ? refusal : "the damaged file was rewritten")
    }

    private func fullDisk(
        _ fixture: VaultFixture,
        base: URL,
        tmpfs: Bool,
        planted: Bool
    ) async throws
        -> DiskFaultReport
    {
        if tmpfs, case .success(let disk) = try await Tmpfs.mount(at: base.appending(path: "disk"), size: "256k") {
            do {
                let harness = try await DiskFaultHarness(fixture, directory: disk.mountPoint.appending(path: "store"))
                try await disk.fill("filler")
                let outcome = try await harness.attemptWrite(
                    by: planted ? .inPlaceWriter(fileSizeLimit: nil) : .library
                )
                // Opened while the disk is still full: reading needs no space.
                let refusal = try await harness.previousEnvelopeRefusal()
                try await disk.unmount()
                let words = ["No space left on device", harness.directory.path]
                return report("256 KiB tmpfs filled up", outcome, .fileSystemFailed, words, refusal)
            } catch {
                try? await disk.unmount()
                throw error
            }
        }
        let harness = try await DiskFaultHarness(fixture, directory: base.appending(path: "store"))
        let limit = 64
        let writer: DiskFaultHarness.Writer =
            planted ? .inPlaceWriter(fileSizeLimit: limit) : .libraryInChild(.current, fileSizeLimit: limit)
        let outcome = try await harness.attemptWrite(by: writer)
        let refusal = try await harness.previousEnvelopeRefusal()
        let words = ["File too large", harness.directory.path]
        return report("RLIMIT_FSIZE \(limit) bytes in a child", outcome, .fileSystemFailed, words, refusal)
    }

    /// The library waits for the session lock for its full 60 seconds, or for the file lock (held around each read
    /// and write) for 10 seconds, then gives up with `lockTimeout`.
    private func lockHeld(_ fixture: VaultFixture, base: URL) async throws -> DiskFaultReport {
        let harness = try await DiskFaultHarness(fixture, directory: base.appending(path: "store"))
        let name = self == .lockHeld ? ".session.lock" : ".lock"
        let holder = try ProofChildProcess(["hold-lock", harness.directory.path, name], input: [])
        let said = try await holder.lines { $0.contains("holding") }
        guard said.contains("holding") else {
            let errors = try await holder.standardError()
            throw FixtureError("the lock holder did not take the lock (\(holder.termination)): \(errors)")
        }
        // The file lock's wait is a blocking one: it runs in a child, off this process's threads.
        let writer: DiskFaultHarness.Writer =
            self == .lockHeld ? .library : .libraryInChild(.current, fileSizeLimit: nil)
        let outcome = try await harness.attemptWrite(by: writer)
        _ = try await holder.end()
        let refusal = try await harness.previousEnvelopeRefusal()
        let words = [harness.directory.path + "/" + name, "Another process"]
        return report("a child holds \(name)", outcome, .lockTimeout, words, refusal)
    }
}
