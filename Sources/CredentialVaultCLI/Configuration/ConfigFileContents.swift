import CredentialVault
import Foundation

/// The config file, parsed: the top-level keys (the default profile) and the named profiles of `"profiles"`.
///
/// ```json
/// {"issuer": "https://id.example", "hosts": ["git.example"],
///  "profiles": {"work": {"issuer": "https://id.work.example", "hosts": ["git.work.example"]}}}
/// ```
///
/// Every key a profile may hold is a key the top level may hold (``Settings/allKeys`` and `hosts`); a named profile's
/// keys override the top level's. An unknown key is refused in both places, with the same words.
struct ConfigFileContents: Sendable {
    /// The top level: the default profile.
    var topLevel = ConfigProfile()
    /// The named profiles, by name.
    var profiles: [String: ConfigProfile] = [:]

    /// The key of the named profiles' object.
    static let profilesKey = "profiles"
    /// The key of a profile's hosts (git and docker choose the profile by host).
    static let hostsKey = "hosts"

    /// Whether `name` can name a profile: 1 to 64 of `A-Z a-z 0-9 . _ -`, and not `.` or `..` (a profile's name is a
    /// directory name in its default store).
    static func isValidProfileName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name != "." && name != ".."
            && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// The named profiles, sorted.
    var profileNames: [String] { profiles.keys.sorted() }

    /// Whether any profile, the top level included, names hosts: git and docker then choose the profile by host, and
    /// a host none of them names gets no credential.
    var namesHosts: Bool { topLevel.hosts != nil || profiles.values.contains { $0.hosts != nil } }

    /// The profile that serves `host`: a named profile that names it (the first by name), else the top level when
    /// it names it (`.some(nil)`), else nil (no profile claims it).
    func profile(claiming host: String) -> String?? {
        if let name = profileNames.first(where: { profiles[$0]?.claims(host) == true }) { return .some(name) }
        if topLevel.claims(host) { return .some(nil) }
        return nil
    }

    /// No config file: no key, no profile.
    init() {}

    /// Parses the config file's bytes.
    /// - Throws: ``CLIError`` (configuration) for a file that is not a JSON object, an unknown key (at the top level
    ///   or in a profile), a secret, a value of the wrong type, or a profile whose name is not allowed.
    init(data: Data, path: String) throws {
        let object: [String: Any]
        do throws(UntrustedJSON.Refusal) {
            object = try UntrustedJSON.object(from: data, maximumSize: ConfigFile.maximumSize)
        } catch .notDecodable {
            throw CLIError.configuration("the config file \(path) is not a JSON object")
        } catch {
            throw CLIError.configuration("the config file \(path) is not read: \(error)")
        }
        var top = object
        if let named = top.removeValue(forKey: Self.profilesKey) {
            guard let named = named as? [String: Any] else {
                throw CLIError.configuration(
                    "the config file \(path): '\(Self.profilesKey)' must be an object of profiles by name"
                )
            }
            for (name, value) in named {
                guard Self.isValidProfileName(name) else {
                    throw CLIError.configuration(
                        "the config file \(path) has a profile named '\(Format.escapingControlCharacters(name))'; a "
                            + "profile's name is 1 to 64 letters, digits, '.', '_' or '-'"
                    )
                }
                guard let keys = value as? [String: Any] else {
                    throw CLIError.configuration("the config file \(path): profile '\(name)' must be an object")
                }
                profiles[name] = try Self.profile(keys, in: "the config file \(path), profile '\(name)',")
            }
        }
        topLevel = try Self.profile(top, in: "the config file \(path)")
        // One host, one account: a host two profiles claim would get the first by name, silently.
        var claimed: [String: String] = [:]
        let named = profiles.sorted { $0.key < $1.key }.map { ("profile '\($0.key)'", $0.value) }
        for (name, profile) in [("the top level", topLevel)] + named {
            for host in profile.hosts ?? [] {
                if let other = claimed.updateValue(name, forKey: host), other != name {
                    throw CLIError.configuration(
                        "the config file \(path): \(other) and \(name) both name the host '\(host)'; a host belongs to "
                            + "one profile"
                    )
                }
            }
        }
    }

    /// Every key the config file knows, in the order error messages list them.
    static var knownKeys: [String] { Settings.allKeys.map(\.fileKey) + [hostsKey, profilesKey] }

    /// One profile's keys; `place` names it in errors ("the config file PATH" or "..., profile 'NAME',").
    private static func profile(_ object: [String: Any], in place: String) throws -> ConfigProfile {
        let known = Set(Settings.allKeys.map(\.fileKey))
        var profile = ConfigProfile()
        for (key, value) in object {
            if key == hostsKey {
                guard let list = value as? [String], list.allSatisfy({ !$0.isEmpty }) else {
                    throw CLIError.configuration("\(place) has a '\(hostsKey)' that is not a list of host names")
                }
                // git and docker name a host (`host` or `host:port`): an entry with a scheme, a path or a user
                // would never match, and silently.
                if let wrong = list.first(where: { $0.contains(where: { "/@ \t\n".contains($0) }) }) {
                    throw CLIError.configuration(
                        "\(place) has the host '\(Format.escapingControlCharacters(wrong))' in '\(hostsKey)': a host is a "
                            + "name or name:port, without a scheme, user or path (git.example.com, registry.example:5000)"
                    )
                }
                profile.hosts = list.map { $0.lowercased() }
                continue
            }
            guard known.contains(key) else { throw unknownKey(key, in: place) }
            switch value {
            case let text as String: profile.values[key] = text
            case let list as [String] where key == "scopes": profile.values[key] = list.joined(separator: " ")
            case let list as [String] where key == "authParams": profile.values[key] = list.joined(separator: "\n")
            case let number as NSNumber where key == "maxAge": profile.values[key] = number.stringValue
            case let number as NSNumber where key == "timeout": profile.values[key] = number.stringValue
            default:
                throw CLIError.configuration("\(place): '\(key)' must be a string")
            }
        }
        return profile
    }

    /// The one wording of an unknown key, at the top level and in a profile alike.
    private static func unknownKey(_ key: String, in place: String) -> CLIError {
        let shown = Format.escapingControlCharacters(key)
        if key == "clientSecret" || key == "clientKey" {
            return CLIError.configuration(
                "\(place) has '\(key)': a secret does not belong in the config file. Put it in "
                    + "a file of its own that only you can read (chmod 600) and name that file with "
                    + "'\(key)File'"
            )
        }
        if key == profilesKey {
            return CLIError.configuration("\(place) has '\(profilesKey)': profiles do not nest")
        }
        return CLIError.configuration(
            "\(place) has an unknown key '\(shown)'; known keys: " + knownKeys.joined(separator: ", ")
        )
    }
}
