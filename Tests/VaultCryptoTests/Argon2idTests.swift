import Foundation
import Testing

@testable import VaultCrypto

@Suite("Argon2id")
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

    @Test("a heartbeat task keeps ticking (largest gap under 20 ms) while 8 KDFs run")
    func heartbeatKeepsTicking() async throws {
        let parameters = try Argon2idParameters.generate()
        let clock = ContinuousClock()
        let heartbeat = Task {
            var largest = Duration.zero
            var last = clock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(2))
                let now = clock.now
                largest = max(largest, now - last)
                last = now
            }
            return largest
        }
        let started = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    _ = try await Argon2id.deriveKey(password: "password \(index)", parameters: parameters)
                }
            }
            try await group.waitForAll()
        }
        let kdfTime = clock.now - started
        heartbeat.cancel()
        let gap = await heartbeat.value
        // Only meaningful when the KDFs ran long enough to have stalled a blocked pool many times over.
        #expect(kdfTime > .milliseconds(100))
        #expect(gap < .milliseconds(20), "largest heartbeat gap \(gap) while 8 KDFs took \(kdfTime)")
    }
}
