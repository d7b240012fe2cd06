import ArgumentParser
import Foundation
import KeyServiceCore
import VaultCrypto

/// Where the peppers and the signing seed come from: `--secrets-dir`, or the environment.
struct SecretOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            """
            A directory (mode 700, yours) of secret files, each mode 600 and yours: pepper-1, pepper-2, ... \
            (32 bytes each) and signing-seed. Created with pepper-1 and signing-seed on first start when missing \
            or empty. Without it the secrets come from KEYSERVICE_PEPPER_1, KEYSERVICE_PEPPER_2, ... and \
            KEYSERVICE_SIGNING_SEED (base64 of 32 bytes).
            """,
            valueName: "dir"
        ),
        completion: .directory
    )
    var secretsDir: String?

    @Option(
        help: ArgumentHelp(
            "The pepper version new keys get (default: the highest held): keep the old one while a new pepper "
                + "reaches every instance.",
            valueName: "n"
        )
    )
    var pepperVersion: Int?

    /// The environment variable of pepper `version`.
    static func pepperVariable(_ version: Int) -> String { "KEYSERVICE_PEPPER_\(version)" }
    static let pepperVariablePrefix = "KEYSERVICE_PEPPER_"
    static let signingSeedVariable = "KEYSERVICE_SIGNING_SEED"

    /// Loads the secrets, creating a secrets directory's first pepper and seed when it has none and `mayCreate`.
    /// - Throws: ``KeyServiceError`` saying what is missing, unsafe or damaged; never a secret.
    func load(mayCreate: Bool) throws -> Secrets {
        let environment = ProcessInfo.processInfo.environment
        let fromEnvironment = environment.keys.contains {
            $0.hasPrefix(Self.pepperVariablePrefix) || $0 == Self.signingSeedVariable
        }
        if let secretsDir {
            guard !fromEnvironment else {
                throw KeyServiceError(
                    "secrets come from --secrets-dir or from KEYSERVICE_PEPPER_n/KEYSERVICE_SIGNING_SEED, not both: "
                        + "unset the variables or drop --secrets-dir"
                )
            }
            let directory = SecretsDirectory(path: secretsDir)
            let (peppers, seed) = try directory.load(mayCreate: mayCreate)
            return Secrets(peppers: try PepperSet(peppers, newestVersion: pepperVersion), signingSeed: seed)
        }
        guard fromEnvironment else {
            throw KeyServiceError(
                "no pepper: give --secrets-dir DIR (created on first start), or set KEYSERVICE_PEPPER_1 and "
                    + "KEYSERVICE_SIGNING_SEED to base64 of 32 random bytes each"
            )
        }
        var peppers: [Int: SecureBytes] = [:]
        for (name, value) in environment where name.hasPrefix(Self.pepperVariablePrefix) {
            guard let version = Int(name.dropFirst(Self.pepperVariablePrefix.count)), version >= 1 else {
                throw KeyServiceError("\(name): a pepper variable is KEYSERVICE_PEPPER_ and a version, 1 or more")
            }
            peppers[version] = try Self.decode(value, name: name)
        }
        guard let seedText = environment[Self.signingSeedVariable] else {
            throw KeyServiceError("\(Self.signingSeedVariable) is not set: base64 of 32 random bytes")
        }
        let seed = try Self.decode(seedText, name: Self.signingSeedVariable)
        return Secrets(peppers: try PepperSet(peppers, newestVersion: pepperVersion), signingSeed: seed)
    }

    private static func decode(_ text: String, name: String) throws -> SecureBytes {
        guard var bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw KeyServiceError("\(name) is not base64")
        }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        guard bytes.count == PepperSet.pepperLength else {
            throw KeyServiceError("\(name) is not base64 of \(PepperSet.pepperLength) bytes")
        }
        return SecureBytes(bytes)
    }
}

/// The loaded secrets.
struct Secrets: Sendable {
    let peppers: PepperSet
    /// The signing seed: checked and held, but KeyService v1 signs nothing (kept for v2).
    let signingSeed: SecureBytes
}
