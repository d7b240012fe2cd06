import Foundation
import Synchronization
import Testing
import VaultTestSupport

@testable import VaultCrypto

@Suite("Argon2id", .tags(.alone), .enabled(inTier: .alone))
struct Argon2idTests {
    struct VectorFile: Decodable {
        struct Vector: Decodable {
            let password: String
            let opsLimit: UInt64
            let memLimitBytes: UInt64
            let saltHex: String
            let outputHex: String
        }
        let source: String
        let vectors: [Vector]
    }

    static let file = try! Vectors.load("argon2id.json", as: VectorFile.self)

    @Test("matches argon2-cffi (an independent implementation) for each parameter set", arguments: file.vectors.indices)
    func crossCheck(index: Int) async throws {
        let vector = Self.file.vectors[index]
        let parameters = Argon2idParameters(
            opsLimit: vector.opsLimit,
            memLimitBytes: vector.memLimitBytes,
            salt: Data(hex: vector.saltHex)
        )
        let output = try await Argon2id.deriveKey(password: vector.password, parameters: parameters, outputLength: 64)
        #expect(output.copyToData().hex == vector.outputHex, "source: \(Self.file.source)")
    }

    @Test("the vector file covers at least three parameter sets and a non-ASCII password")
    func vectorCoverage() {
        let sets = Set(Self.file.vectors.map { "\($0.opsLimit)/\($0.memLimitBytes)" })
        #expect(sets.count >= 3)
        #expect(Self.file.vectors.contains { !$0.password.allSatisfy(\.isASCII) })
    }

    @Test("a password in another Unicode form derives the same key (NFKC)")
    func normalisation() async throws {
        let parameters = try Argon2idParameters.generate(opsLimit: 2, memLimitBytes: 19 << 20)
        let composed = try await Argon2id.deriveKey(password: "p\u{E4}ssw\u{F6}rd \u{FB01}", parameters: parameters)
        let decomposed = try await Argon2id.deriveKey(password: "pa\u{308}sswo\u{308}rd fi", parameters: parameters)
        let other = try await Argon2id.deriveKey(password: "passwords fi", parameters: parameters)
        #expect(composed == decomposed)
        #expect(composed != other)
    }

    @Test("the salt changes the output")
    func saltMatters() async throws {
        let first = try Argon2idParameters.generate(opsLimit: 2, memLimitBytes: 19 << 20)
        let second = try Argon2idParameters.generate(opsLimit: 2, memLimitBytes: 19 << 20)
        #expect(first.salt != second.salt)
        let a = try await Argon2id.deriveKey(password: "pw", parameters: first)
        let b = try await Argon2id.deriveKey(password: "pw", parameters: second)
        #expect(a != b)
    }

    @Test(
        "parameters under OWASP's floor are refused",
        arguments: [(1, 46), (2, 18), (3, 11), (4, 8), (5, 6), (10, 1)] as [(UInt64, UInt64)]
    )
    func belowFloor(ops: UInt64, mebibytes: UInt64) async {
        let parameters = Argon2idParameters(opsLimit: ops, memLimitBytes: mebibytes << 20, salt: Data(count: 16))
        #expect(throws: CryptoError(.parametersBelowFloor, "")) { try parameters.validate() }
        await #expect(throws: CryptoError(.parametersBelowFloor, "")) {
            _ = try await Argon2id.deriveKey(password: "pw", parameters: parameters)
        }
    }

    @Test(
        "parameters on OWASP's floor are accepted",
        arguments: [(1, 47), (2, 19), (3, 12), (4, 9), (5, 7)] as [(UInt64, UInt64)]
    )
    func onFloor(ops: UInt64, mebibytes: UInt64) throws {
        try Argon2idParameters(opsLimit: ops, memLimitBytes: mebibytes << 20, salt: Data(count: 16)).validate()
    }

    @Test("a wrong salt length and a hostile cost are refused before any work")
    func bounds() {
        #expect(throws: CryptoError(.invalidParameters, "")) {
            try Argon2idParameters(opsLimit: 2, memLimitBytes: 64 << 20, salt: Data(count: 8)).validate()
        }
        #expect(throws: CryptoError(.invalidParameters, "")) {
            try Argon2idParameters(opsLimit: 2, memLimitBytes: 1 << 40, salt: Data(count: 16)).validate()
        }
        #expect(throws: CryptoError(.invalidParameters, "")) {
            try Argon2idParameters(opsLimit: 1_000_000, memLimitBytes: 64 << 20, salt: Data(count: 16)).validate()
        }
    }

    @Test("the defaults are 2 passes over 64 MiB with a 16-byte salt")
    func defaults() throws {
        let parameters = try Argon2idParameters.generate()
        #expect(parameters.opsLimit == 2)
        #expect(parameters.memLimitBytes == 64 * 1024 * 1024)
        #expect(parameters.salt.count == 16)
    }

    // The largest pause other tasks see while derivations run is a figure, not a rule: Benchmarks/heartbeat
    // prints it beside a baseline. These two check, by counting, the two things that keep that pause short.

    @Test("no more than cores - 1 (at least one) derivations run at once")
    func concurrencyLimit() async throws {
        let parameters = try Argon2idParameters.generate(opsLimit: 2, memLimitBytes: 19 << 20)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    _ = try await Argon2id.deriveKey(password: "password \(index)", parameters: parameters)
                }
            }
            try await group.waitForAll()
        }
        let limit = Argon2id.maximumConcurrentDerivations
        #expect(limit == max(1, ProcessInfo.processInfo.activeProcessorCount - 1))
        // The high-water mark covers every derivation in this process so far, other tests' included.
        let mostRunning = Argon2id.currentOccupancy.mostRunning
        #expect(mostRunning >= 1)
        #expect(mostRunning <= limit)
    }

    @Test("derivations wait on threads of their own: more of them wait at once than the pool has threads")
    func offCooperativePool() async throws {
        let parameters = try Argon2idParameters.generate(opsLimit: 2, memLimitBytes: 19 << 20)
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        let places = Argon2id.maximumConcurrentDerivations
        for _ in 0..<places { Argon2id.slots.wait() }
        // While this test holds every place, each derivation blocks where it waits. Had they waited on the
        // cooperative pool, they would block all its threads and this test could never resume, so a thread of
        // its own watches the count and always gives the places back. Its deadline only ends such a deadlock;
        // nothing is asserted about time.
        let watch = WatchResult()
        Thread {
            let deadline = ContinuousClock.now + .seconds(60)
            while Argon2id.currentOccupancy.waiting < count, ContinuousClock.now < deadline { usleep(1_000) }
            watch.mostWaiting.withLock { $0 = Argon2id.currentOccupancy.waiting }
            for _ in 0..<places { Argon2id.slots.signal() }
        }
        .start()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    _ = try await Argon2id.deriveKey(password: "password \(index)", parameters: parameters)
                }
            }
            try await group.waitForAll()
        }
        #expect(watch.mostWaiting.withLock { $0 } >= count)
    }

    final class WatchResult: Sendable {
        let mostWaiting = Mutex(0)
    }
}
