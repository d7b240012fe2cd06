import Foundation
import PropertyBased
import Testing

/// The harness catches what it is there to catch: run over toy parsers with a planted defect, it reports the
/// failure with the seed of the input, and that seed replays it. (A parser that traps cannot be shown in-process:
/// the trap ends the test process; ``CrashSeedReporter`` prints the seeds first.)
@Suite("hostile input: the harness catches planted defects")
struct PlantedDefectTests {
    /// A toy config reader whose documented error is ``ToyError``, but which lets Foundation's own error through
    /// for text that is not JSON: the defect an untyped-error check is for.
    enum ToyParser {
        struct ToyError: Error {}

        static func parse(_ bytes: [UInt8]) throws -> [String: Any] {
            // Planted: the JSONSerialization error escapes as it is.
            let value = try JSONSerialization.jsonObject(with: Data(bytes))
            guard let object = value as? [String: Any] else { throw ToyError() }
            return object
        }

        /// A reader with no size cap whose work grows with the square of the input: harmless on small inputs, a
        /// half a second and more on inputs past a cap it should have had.
        static func parseUncapped(_ bytes: [UInt8]) throws(ToyError) {
            let share = Double(bytes.count) / Double(64 * 1024)
            let end = ContinuousClock.now + .milliseconds(Int(share * share * 500))
            while ContinuousClock.now < end {}
            if bytes.first != UInt8(ascii: "{") { throw ToyError() }
        }
    }

    static let inputs = HostileInputs.bytes(
        seeds: [Array(#"{"issuer":"https://issuer.example","scopes":["a"]}"#.utf8)],
        json: HostileJSON(names: ["issuer", "scopes"], strings: ["https://issuer.example"]),
        sizeCap: 64 * 1024
    )

    /// Fixed seeds, so the planted defect is met in every run.
    static func settings(inputs: Int, replay: String? = nil, hangBound: Duration = .seconds(10)) -> HostileInputSettings
    {
        HostileInputSettings(
            inputs: inputs,
            runSeed: Xoshiro(seed: (0x5EED, 0xF022, 0xC0FF_EE, 0xD00D)),
            replaySeed: replay.flatMap(Xoshiro.init(seed:)),
            hangBound: hangBound
        )
    }

    @Test("an error of another type than the parser's is reported with its seed, and the seed replays it")
    func untypedError() async throws {
        var run = HostileInputRun(
            parser: "toy-untyped",
            suite: "PlantedDefectTests",
            settings: Self.settings(inputs: 500)
        )
        run.label = "PLANTED"
        let report = await run.run(
            Self.inputs,
            refusal: ToyParser.ToyError.self,
            describe: HostileBytes.describe
        ) {
            _ = try ToyParser.parse($0)
            return .accepted
        }
        print(report.figureLine)
        #expect(report.untypedErrors > 0)
        let failure = try #require(report.failures.first)
        #expect(failure.kind == .untypedError)
        #expect(failure.replay.contains("CREDENTIAL_VAULT_FUZZ_SEED='\(failure.seed)'"))

        var replay = HostileInputRun(
            parser: "toy-untyped",
            suite: "PlantedDefectTests",
            settings: Self.settings(inputs: 500, replay: failure.seed)
        )
        replay.label = "PLANTED"
        let replayed = await replay.run(
            Self.inputs,
            refusal: ToyParser.ToyError.self,
            describe: HostileBytes.describe
        ) {
            _ = try ToyParser.parse($0)
            return .accepted
        }
        #expect(replayed.inputs == 1)
        #expect(replayed.failures.first?.kind == .untypedError)
        #expect(replayed.failures.first?.input == failure.input)
    }

    @Test("an input that runs past the hang bound is reported with its seed")
    func uncapped() async throws {
        // A bound of a quarter second instead of ten, so the planted defect costs seconds, not minutes.
        var run = HostileInputRun(
            parser: "toy-uncapped",
            suite: "PlantedDefectTests",
            settings: Self.settings(inputs: 700, hangBound: .milliseconds(250))
        )
        run.label = "PLANTED"
        let report = await run.run(
            Self.inputs,
            refusal: ToyParser.ToyError.self,
            describe: HostileBytes.describe
        ) {
            try ToyParser.parseUncapped($0)
            return .accepted
        }
        print(report.figureLine)
        #expect(report.hangs > 0)
        let failure = try #require(report.failures.first { $0.kind == .hang })
        #expect(failure.replay.contains(failure.seed))
    }
}
