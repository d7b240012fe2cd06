import Foundation
import PropertyBased
import Testing
import VaultTestSupport

/// The harness catches what it is there to catch: run over toy parsers with a planted defect, it reports the
/// failure with the seed of the input, and that seed replays it. A parser that traps ends the process it runs in,
/// so that one runs in a child process, which must die of the trap after printing the seed.
@Suite("hostile input: the harness catches planted defects", .tags(.fuzz), .enabled(inTier: .fuzz))
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

        /// A reader that keeps its nesting in a fixed array of eight and indexes past it on deeper input.
        static func parseTrapping(_ bytes: [UInt8]) throws(ToyError) {
            var open = [UInt8](repeating: 0, count: 8)
            var depth = 0
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    // Planted: no check against the array's size; the ninth level traps.
                    open[depth] = byte
                    depth += 1
                case UInt8(ascii: "]"),
                    UInt8(ascii: "}") where depth > 0:
                    depth -= 1
                default: continue
                }
            }
            if depth != 0 { throw ToyError() }
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

    /// The variable that makes ``trappingChild()`` run: set only for the child process ``trap()`` starts.
    static let childVariable = "CREDENTIAL_VAULT_FUZZ_PLANTED_TRAP"

    /// Not a test of its own: the child process of ``trap()``, skipped in every other run.
    @Test(
        "(child process of the planted trap)",
        .enabled(if: ProcessInfo.processInfo.environment[childVariable] == "1")
    )
    func trappingChild() async throws {
        // The fixed run seed, or the one input a replay names.
        let asked = try HostileInputSettings.fromEnvironment()
        let settings = asked.replaySeed == nil ? Self.settings(inputs: 2000) : asked
        var run = HostileInputRun(parser: "toy-trapping", suite: "PlantedDefectTests", settings: settings)
        run.label = "PLANTED"
        let report = await run.run(Self.inputs, refusal: ToyParser.ToyError.self, describe: HostileBytes.describe) {
            try ToyParser.parseTrapping($0)
            return .accepted
        }
        Issue.record("the planted trap never fired: \(report.figureLine)")
    }

    #if os(Linux)
    @Test(
        "a parser that traps ends the process, but the seed of the input it trapped on is printed first and replays it"
    )
    func trap() async throws {
        let filter = "^HostileInputTests\\.PlantedDefectTests/trappingChild"
        // No backtrace: the child's death is the expected outcome, and symbolicating it takes seconds.
        let base = [Self.childVariable: "1", "SWIFT_BACKTRACE": "enable=no", "CREDENTIAL_VAULT_FUZZ_SEED": ""]
        let child = try await ChildTestRun.run(filter: filter, environment: base)
        #expect(child.terminatedBySignal, "the child did not die of the trap:\n\(child.output)")
        let line = try #require(
            child.output.split(separator: "\n").first {
                $0.hasPrefix("PROOF fuzz: CRASH candidate toy-trapping input #")
            },
            "no crash report in the child's output:\n\(child.output)"
        )
        let seed = try #require(line.split(separator: " ").last.map(String.init))
        print("PLANTED fuzz: toy-trapping trapped in a child process (signal \(child.status)); it printed: \(line)")

        var replay = base
        replay["CREDENTIAL_VAULT_FUZZ_SEED"] = seed
        let again = try await ChildTestRun.run(filter: filter, environment: replay)
        #expect(again.terminatedBySignal)
        #expect(again.output.contains("PROOF fuzz: CRASH candidate toy-trapping input #0 seed \(seed)"))
    }
    #endif
}
