import Foundation
import PropertyBased
import Testing
import VaultTestSupport

@testable import CredentialVault

/// Every input that ever crashed a parser, replayed on every `make test` (the hostile-input phase runs this
/// suite with the random runs): a crash that was found cannot come back unseen. Each case is the seed the crash
/// report printed and its parser; the input is made again by the same generator, and its fingerprint (length and
/// FNV-1a hash) pins it, so a change to the generators that makes another input from the seed fails here instead of
/// silently replaying something else.
///
/// To add a crash: take the `PROOF fuzz: CRASH candidate <parser> input #n seed <seed>` line, add a
/// ``CrashRegression`` with that parser and seed to ``crashes`` and fingerprint 0, run this suite, and copy the
/// fingerprint its failure prints (after checking that the replay is the input that crashed). A parser that is not
/// in ``replay(_:)`` yet gets a case there: its generator and the body of its fuzz test.
@Suite("hostile input: every input that once crashed a parser", .tags(.fuzz), .enabled(inTier: .fuzz))
struct CrashRegressionTests {
    struct CrashRegression: Sendable, CustomTestStringConvertible {
        /// What the input is, and where it was found.
        let name: String
        /// The parser's name in the figure line (`smart-discovery`, ...).
        let parser: String
        let seed: String
        /// The generated input's byte count and FNV-1a hash, as ``fingerprint(_:)`` prints them.
        let fingerprint: String

        var testDescription: String { "\(parser): \(name)" }
    }

    static let crashes = [
        CrashRegression(
            name:
                "a CapabilityStatement whose 513th level opens at its last byte: Foundation's scanner trapped (issue 21)",
            parser: "smart-discovery",
            seed: "Hbr35Fau5KZImK+BNKMUPUuCxvV5QnE8loDD3KEiIdw=",
            fingerprint: "1932/e92377ae2c051585"
        )
    ]

    /// `bytes`' count and 64-bit FNV-1a hash, as `count/hash`.
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\(bytes.count)/\(String(hash, radix: 16))"
    }

    /// The answers' statuses and bodies, in order: what the fingerprint is taken of.
    static func bytes(_ answers: [HTTPResponse]) -> [UInt8] {
        answers.flatMap { Array("\($0.status) \($0.body.count):".utf8) + Array($0.body) }
    }

    @Test("each input that once crashed a parser is now accepted or refused with its typed error", arguments: crashes)
    func replay(_ crash: CrashRegression) async throws {
        let seed = try #require(Xoshiro(seed: crash.seed), "\(crash.seed) is not a seed")
        let settings = HostileInputSettings(inputs: 1, runSeed: seed, replaySeed: seed, hangBound: .seconds(10))
        let run = HostileInputRun(parser: crash.parser, suite: "CrashRegressionTests", settings: settings)
        var rng = seed
        let report: HostileInputReport
        let input: [UInt8]
        switch crash.parser {
        case "oidc-discovery":
            input = Self.bytes([DiscoveryFuzzTests.openIDAnswers.run(using: &rng)])
            report = await run.run(
                DiscoveryFuzzTests.openIDAnswers,
                refusal: VaultError.self,
                describe: ServerAnswerFuzzTests.describe,
                DiscoveryFuzzTests.openIDConnect
            )
        case "smart-discovery":
            input = Self.bytes(DiscoveryFuzzTests.smartAnswers.run(using: &rng))
            report = await run.run(
                DiscoveryFuzzTests.smartAnswers,
                refusal: VaultError.self,
                describe: DiscoveryFuzzTests.describe,
                DiscoveryFuzzTests.smart
            )
        default:
            Issue.record("no replay for the parser \(crash.parser): add its generator and body to replay(_:)")
            return
        }
        #expect(
            Self.fingerprint(input) == crash.fingerprint,
            "seed \(crash.seed) now makes another input (fingerprint \(Self.fingerprint(input))): the generators changed"
        )
        #expect(report.inputs == 1)
        #expect(!report.failed, "\(report.failures)")
    }
}
