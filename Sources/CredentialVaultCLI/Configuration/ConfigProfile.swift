/// One profile of the config file: the top level (the default profile) or one entry of `"profiles"`.
struct ConfigProfile: Sendable {
    /// The profile's values by config-file key (``Settings/Key/fileKey``), as text (`scopes` joined by spaces,
    /// `authParams` by newlines, numbers written out).
    var values: [String: String] = [:]
    /// The hosts (`host` or `host:port`, lower case) whose git and docker credentials this profile serves; nil when
    /// the profile names none.
    var hosts: [String]?

    /// Whether `host` (`git.example.com`, `git.example.com:8443`) is one of ``hosts``, compared without case.
    func claims(_ host: String) -> Bool {
        hosts?.contains(host.lowercased()) ?? false
    }
}
