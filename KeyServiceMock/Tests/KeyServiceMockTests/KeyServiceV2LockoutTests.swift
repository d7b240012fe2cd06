import Foundation
import KeyServiceMock
import Testing
import VaultCrypto
import VaultTestSupport

/// Protocol 2's lockout under a flood, as ``LockoutTests`` floods protocol 1: it floods its process on purpose, so
/// it runs alone (the alone tier).
@Suite("Key service protocol 2: lockout under concurrent evaluations", .tags(.alone, .races), .enabled(inTier: .alone))
struct KeyServiceV2LockoutTests {
    @Test(
        "simultaneous evaluations of a wrong password on one key: exactly three answered, every other one 403",
        arguments: [200, 1_000]
    )
    func concurrentEvaluationsLockExactly(attempts: Int) async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let counts = try await concurrentEvaluations(on: server.keyServiceV2URL, attempts: attempts)
            #expect(counts == [200: 3, 403: attempts - 3])
        }
    }
}

/// Registers a key, fires `attempts` evaluations of a wrong password at it at once and counts the answers by status
/// (0: no answer).
func concurrentEvaluations(on base: URL, attempts: Int) async throws -> [Int: Int] {
    // Each client waits up to 120 s: the test is about counts, not speed (see concurrentWrongAttempts).
    let http = HTTPClient()
    let calls = KeyServiceV2Calls(base: base, http: http)
    let key = try await calls.register(password: "right")
    // Every blinded element made up front, so the requests leave as close together as possible.
    let blinded = try (0..<attempts).map { _ in try OPRF.blind(KeyServiceV2Calls.input("wrong")).blindedElement }
    let start = AsyncStream.makeStream(of: Void.self)
    return await withTaskGroup(of: Int.self) { group in
        for attempt in 0..<attempts {
            group.addTask {
                for await _ in start.stream { break }
                return await status { try await calls.evaluate(key.keyId, blinded: blinded[attempt]) }
            }
        }
        start.continuation.finish()
        var counts: [Int: Int] = [:]
        for await status in group { counts[status, default: 0] += 1 }
        return counts
    }
}
