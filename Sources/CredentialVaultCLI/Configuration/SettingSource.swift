/// Where an effective setting came from.
enum SettingSource: CustomStringConvertible, Equatable {
    case flag(String)
    case environment(String)
    case file(String)
    /// A named profile of the config file at this path.
    case profile(String, file: String)
    case derived(String)
    case builtIn
    case embedded
    case unset

    var description: String {
        switch self {
        case .flag(let name): "flag --\(name)"
        case .environment(let name): "environment \(name)"
        case .file(let path): "config file \(path)"
        case .profile(let name, let path): "config file \(path), profile \(name)"
        case .derived(let from): "derived from \(from)"
        case .builtIn: "default"
        case .embedded: "embedded default"
        case .unset: "not set"
        }
    }
}
