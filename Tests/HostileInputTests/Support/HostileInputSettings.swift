import Foundation
import PropertyBased

/// How a hostile-input run is sized and seeded, from the environment:
///
/// - `CREDENTIAL_VAULT_FUZZ_INPUTS`: inputs per parser (default 100,000; `make proof-fuzz-long` sets ten times that).
/// - `CREDENTIAL_VAULT_FUZZ_RUN_SEED`: the seed a run derives every input's seed from (default: a random one,
///   printed in the figure line), to repeat a whole run.
/// - `CREDENTIAL_VAULT_FUZZ_SEED`: one input's seed, as a failure prints it: only that input runs, and what it does
///   is printed.
///
/// An empty variable is an unset one.
struct HostileInputSettings: Sendable {
    /// Inputs per parser in CI.
    static let defaultInputs = 100_000
    /// The time one input may take before the run reports it as a hang: generous, as the issue asks; no input of a
    /// correct parser comes near it, even on a loaded two-core machine in a debug build.
    static let defaultHangBound = Duration.seconds(10)

    let inputs: Int
    let runSeed: Xoshiro
    let replaySeed: Xoshiro?
    let hangBound: Duration

    /// The settings the environment asks for; a seed that is not one is a test failure, not a silent random run.
    static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> HostileInputSettings {
        var inputs = defaultInputs
        if let text = environment["CREDENTIAL_VAULT_FUZZ_INPUTS"], !text.isEmpty {
            guard let value = Int(text), value > 0 else { throw SettingsError("CREDENTIAL_VAULT_FUZZ_INPUTS", text) }
            inputs = value
        }
        var runSeed = Xoshiro()
        if let text = environment["CREDENTIAL_VAULT_FUZZ_RUN_SEED"], !text.isEmpty {
            guard let seed = Xoshiro(seed: text) else { throw SettingsError("CREDENTIAL_VAULT_FUZZ_RUN_SEED", text) }
            runSeed = seed
        }
        var replaySeed: Xoshiro?
        if let text = environment["CREDENTIAL_VAULT_FUZZ_SEED"], !text.isEmpty {
            guard let seed = Xoshiro(seed: text) else { throw SettingsError("CREDENTIAL_VAULT_FUZZ_SEED", text) }
            replaySeed = seed
        }
        return HostileInputSettings(
            inputs: inputs,
            runSeed: runSeed,
            replaySeed: replaySeed,
            hangBound: defaultHangBound
        )
    }

    /// A variable that does not hold what it must.
    struct SettingsError: Error, CustomStringConvertible {
        let description: String

        init(_ name: String, _ value: String) {
            description = "\(name)=\(value) is not valid: a count above 0, or a seed as a failure prints it"
        }
    }
}
