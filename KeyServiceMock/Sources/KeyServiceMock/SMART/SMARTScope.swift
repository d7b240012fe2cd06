/// One SMART resource scope, v1 (`patient/Observation.read`, `user/*.*`) or v2 (`patient/Patient.rs?...`),
/// as the permissions it grants.
///
/// The v1 forms map as SMART App Launch 2 says: `.read` is `rs`, `.write` is `cud`, `.*` is `cruds`. A v2
/// query (`?category=...`) is parsed and ignored: it never narrows what the FHIR endpoint allows.
struct SMARTScope: Sendable, Equatable {
    /// `patient`, `user` or `system`.
    let context: String
    /// A resource type, or `*` for all.
    let resourceType: String
    /// A subset of `c`, `r`, `u`, `d`, `s`.
    let permissions: Set<Character>

    /// The scope `text` grants, `nil` for anything that is not a resource scope (`openid`, `launch/patient`, ...).
    init?(_ text: Substring) {
        let withoutQuery = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = withoutQuery.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, ["patient", "user", "system"].contains(parts[0]),
            let dot = parts[1].lastIndex(of: ".")
        else { return nil }
        let resourceType = parts[1][..<dot]
        let suffix = parts[1][parts[1].index(after: dot)...]
        guard resourceType == "*" || (resourceType.first?.isUppercase == true && resourceType.allSatisfy(\.isLetter))
        else { return nil }
        let permissions: Set<Character>
        switch suffix {
        case "read": permissions = ["r", "s"]
        case "write": permissions = ["c", "u", "d"]
        case "*": permissions = ["c", "r", "u", "d", "s"]
        default:
            // v2: a non-empty subsequence of c r u d s, in that order.
            var remaining = Substring("cruds")
            for letter in suffix {
                guard let index = remaining.firstIndex(of: letter) else { return nil }
                remaining = remaining[remaining.index(after: index)...]
            }
            guard !suffix.isEmpty else { return nil }
            permissions = Set(suffix)
        }
        self.context = String(parts[0])
        self.resourceType = String(resourceType)
        self.permissions = permissions
    }

    /// Whether this scope allows `permission` (`r` to read, `s` to search, ...) on `resourceType`.
    func allows(_ permission: Character, on resourceType: String) -> Bool {
        (self.resourceType == "*" || self.resourceType == resourceType) && permissions.contains(permission)
    }

    /// Whether any resource scope in `scope` (space-separated) allows `permission` on `resourceType`.
    static func scope(_ scope: String, allows permission: Character, on resourceType: String) -> Bool {
        scope.split(separator: " ").contains { SMARTScope($0)?.allows(permission, on: resourceType) == true }
    }
}
