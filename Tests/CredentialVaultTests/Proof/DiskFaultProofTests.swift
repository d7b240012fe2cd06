import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Issue 15's disk-fault proof (``DiskFault``): every fault ends in a clear typed error and leaves the previous
/// envelope opening with the password.
@Suite("disk-fault proof: a failed write never costs the previous envelope", .tags(.proof), .enabled(inTier: .proof))
struct DiskFaultProofTests {
    /// Whether `mount -t tmpfs` works here; the reason when it does not. `CREDENTIAL_VAULT_PROOF_NO_TMPFS=1` turns the
    /// tmpfs off, to run the fallbacks on a machine that has one.
    static func tmpfsRefusal(under root: URL) async throws -> String? {
        if ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_PROOF_NO_TMPFS"] == "1" {
            return "turned off by CREDENTIAL_VAULT_PROOF_NO_TMPFS"
        }
        switch try await Tmpfs.mount(at: root.appending(path: "mount-check"), size: "64k") {
        case .success(let disk):
            try await disk.unmount()
            return nil
        case .failure(let refusal):
            return refusal.description
        }
    }

    @Test("every disk fault ends in a clear typed error, and the previous envelope still opens")
    func everyFault() async throws {
        try await VaultFixture.with { fixture in
            let refusal = try await Self.tmpfsRefusal(under: fixture.root)
            if let refusal { print("disk-fault proof: no tmpfs here (\(refusal)); using the fallbacks") }
            // The session-lock fault waits out the library's 60-second lock wait: the others run meanwhile.
            async let lock = DiskFault.lockHeld.run(fixture, root: fixture.root, tmpfs: refusal == nil)
            var reports: [DiskFaultReport] = []
            for fault in DiskFault.allCases where fault != .lockHeld {
                reports.append(try await fault.run(fixture, root: fixture.root, tmpfs: refusal == nil))
            }
            reports.append(try await lock)
            let tally = DiskFaultTally(reports: reports)
            print(tally.figureLine)
            #expect(tally.clearTypedErrors == DiskFault.allCases.count)
            #expect(tally.previousEnvelopesLost == 0)
            #expect(tally.misses.isEmpty, "\(tally.misses)")
        }
    }

    @Test("the harness catches a planted writer that rewrites the envelope in place on a full disk")
    func plantedInPlaceWriter() async throws {
        try await VaultFixture.with { fixture in
            let refusal = try await Self.tmpfsRefusal(under: fixture.root)
            let report = try await DiskFault.fullDisk.run(
                fixture,
                root: fixture.root,
                tmpfs: refusal == nil,
                planted: true
            )
            let tally = DiskFaultTally(reports: [report])
            #expect(tally.previousEnvelopesLost == 1, "\(report.outcome)")
            #expect(!tally.misses.isEmpty)
        }
    }
}
