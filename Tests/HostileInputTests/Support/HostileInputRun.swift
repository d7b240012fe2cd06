import Foundation
import PropertyBased

/// What a parser made of one input.
enum HostileInputOutcome {
    /// Parsed: the input was acceptable.
    case accepted
    /// Refused the way the parser documents (a typed error, or nil where it answers with an optional).
    case refused
}

/// A wrong answer to one input: not a refusal, a broken property (a redirect accepted without its state).
struct HostileInputViolation: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// One parser under hostile inputs: every input from a PropertyBased generator seeded with its own seed (derived
/// from the run's seed), handed to the parser, and what came back sorted into accepted, refused with the parser's
/// own error type, or a failure: an error of another type, a property violation, or a hang (an input that ran past
/// the hang bound). A crash ends the process; ``CrashSeedReporter`` prints its seed first.
///
/// PropertyBased's `propertyCheck` opens a Swift Testing issue-handling scope around every input and seeds every
/// input from the system's random source; at 100,000 inputs per parser that scope would cost more than most of the
/// parsers, and a whole run could not be repeated. This loop drives the same generators with `Xoshiro` seeds of its
/// own (each input's derived from the run's), and prints a failing input's seed in the form
/// `CREDENTIAL_VAULT_FUZZ_SEED` (and PropertyBased's `.fixedSeed`) take. It does not shrink: the seed names the
/// input exactly, and the failure prints it.
struct HostileInputRun {
    /// The parser's name in the figure line.
    let parser: String
    /// The suite's type name, for the replay command.
    let suite: String
    let settings: HostileInputSettings
    /// The word the figure line starts with: `PROOF` for the real parsers, another for planted defects.
    var label = "PROOF"

    init(parser: String, suite: String, settings: HostileInputSettings) {
        self.parser = parser
        self.suite = suite
        self.settings = settings
    }

    /// The command that runs the one input of `seed` again (in the fuzz tier, which a bare `swift test` skips).
    func replayCommand(_ seed: String) -> String {
        "CREDENTIAL_VAULT_TIER=fuzz CREDENTIAL_VAULT_FUZZ_SEED='\(seed)' "
            + "swift test --skip-build --filter '^HostileInputTests\\.\(suite)/'"
    }

    /// Runs `body` on every generated input; errors of type `Refusal` are the parser's refusals.
    func run<Input, Refusal: Error>(
        _ generator: Generator<Input, some Sequence>,
        refusal: Refusal.Type,
        describe: (Input) -> String,
        _ body: (Input) async throws -> HostileInputOutcome
    ) async -> HostileInputReport {
        var report = HostileInputReport(parser: parser, label: label, runSeed: settings.runSeed.currentSeed)
        let replaying = settings.replaySeed != nil
        let count = replaying ? 1 : settings.inputs
        let replay = replayCommand
        let watchdog = HangWatchdog(
            parser: parser,
            bound: settings.hangBound,
            abortAfter: max(settings.hangBound * 6, .seconds(60)),
            replay: { replay($0) }
        )
        watchdog.start()
        defer { watchdog.stop() }
        let slot = CrashSeedReporter.claim(parser)
        defer { slot.map(CrashSeedReporter.release) }

        var master = settings.runSeed
        let clock = ContinuousClock()
        let runStart = clock.now
        for index in 0..<count {
            let seed =
                settings.replaySeed ?? Xoshiro(seed: (master.next(), master.next(), master.next(), master.next()))
            var rng = seed
            let input = generator.run(using: &rng)
            let seedText = seed.currentSeed
            slot?.set(index: index, state: seed.currentState)
            watchdog.begin(index, seed: seedText)
            let start = clock.now
            let result: Result<HostileInputOutcome, any Error>
            do {
                result = .success(try await body(input))
            } catch {
                result = .failure(error)
            }
            let elapsed = start.duration(to: clock.now)
            watchdog.end()

            report.inputs += 1
            var failure: (HostileInputFailure.Kind, String)?
            switch result {
            case .success(.accepted): report.accepted += 1
            case .success(.refused): report.refused += 1
            case .failure(let error as HostileInputViolation): failure = (.violation, error.description)
            case .failure(let error) where error is Refusal: report.refused += 1
            case .failure(let error):
                failure = (.untypedError, "\(type(of: error)), not \(Refusal.self): \(String(reflecting: error))")
            }
            if elapsed > settings.hangBound {
                failure = (.hang, "took \(elapsed), over the bound of \(settings.hangBound)")
            }
            if replaying {
                print(
                    "REPLAY fuzz: \(parser) seed \(seedText): \(failure.map { "\($0.0): \($0.1)" } ?? "\(result)") "
                        + "on input \(describe(input))"
                )
            }
            if let (kind, detail) = failure {
                report.record(
                    HostileInputFailure(
                        kind: kind,
                        index: index,
                        seed: seedText,
                        detail: detail,
                        input: describe(input),
                        replay: replayCommand(seedText)
                    )
                )
            }
        }
        report.elapsed = runStart.duration(to: clock.now)
        return report
    }
}
