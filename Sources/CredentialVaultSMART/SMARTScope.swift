/// One SMART resource scope (SMART App Launch 2.2, "Scopes and Launch Context"), read in either form:
/// version 1 (`patient/Observation.read`, `user/*.*`, `patient/*.write`) or version 2
/// (`patient/Observation.rs?category=...`).
///
/// Version 1 permissions mean what the specification's equivalence table says: `.read` is `.rs`, `.write` is
/// `.cud`, `.*` is `.cruds`. The text stays exactly as written (``text``); ``version2`` gives the v2 form.
public struct SMARTScope: Sendable, Hashable, CustomStringConvertible {
    /// Whose resources the scope reaches.
    public enum Context: String, Sendable, Hashable {
        /// The patient in context.
        case patient
        /// What the signed-in user may reach.
        case user
        /// A backend service, with no user.
        case system
    }

    /// An interaction a scope permits, with its version 2 letter.
    public enum Interaction: Character, Sendable, Hashable, CaseIterable {
        case create = "c"
        case read = "r"
        case update = "u"
        case delete = "d"
        case search = "s"
    }

    /// The scope exactly as written.
    public let text: String
    /// `patient`, `user` or `system`.
    public let context: Context
    /// The resource type, or `*` for every type.
    public let resourceType: String
    /// What it permits.
    public let interactions: Set<Interaction>
    /// A version 2 scope's query (after `?`), restricting it to matching resources; nil without one.
    public let query: String?
    /// Whether it was written in the version 1 form.
    public let isVersion1: Bool

    /// The scope in `text`; nil when it is not a resource scope (`openid`, `launch/patient`, `offline_access`, or
    /// text of neither form, such as v2 letters out of order).
    public init?(_ text: String) {
        self.text = text
        let (head, query) = Self.split(text)
        guard let slash = head.firstIndex(of: "/"), let dot = head.lastIndex(of: "."), slash < dot else { return nil }
        guard let context = Context(rawValue: String(head[..<slash])) else { return nil }
        let type = String(head[head.index(after: slash)..<dot])
        guard type == "*" || (!type.isEmpty && type.allSatisfy { $0.isASCII && $0.isLetter }) else { return nil }
        let permission = String(head[head.index(after: dot)...])
        switch permission {
        case "read": (interactions, isVersion1) = ([.read, .search], true)
        case "write": (interactions, isVersion1) = ([.create, .update, .delete], true)
        case "*": (interactions, isVersion1) = (Set(Interaction.allCases), true)
        default:
            guard let letters = Self.letters(permission) else { return nil }
            (interactions, isVersion1) = (letters, false)
        }
        // Version 1 has no queries.
        if isVersion1, query != nil { return nil }
        self.context = context
        resourceType = type
        self.query = query
    }

    /// The version 2 form: `patient/*.read` is `patient/*.rs`, `user/Observation.write` is
    /// `user/Observation.cud`.
    public var version2: String {
        let letters = Interaction.allCases.filter(interactions.contains).map(\.rawValue)
        return "\(context.rawValue)/\(resourceType).\(String(letters))" + (query.map { "?\($0)" } ?? "")
    }

    /// Whether the scope permits `interaction` on every resource of `resourceType`: the type matches (or the scope
    /// says `*`) and it has no query (a scope with a query reaches only the resources that match it).
    public func covers(_ resourceType: String, _ interaction: Interaction) -> Bool {
        query == nil && (self.resourceType == "*" || self.resourceType == resourceType)
            && interactions.contains(interaction)
    }

    /// The scope as written.
    public var description: String { text }

    private static func split(_ text: String) -> (head: Substring, query: String?) {
        guard let mark = text.firstIndex(of: "?") else { return (text[...], nil) }
        return (text[..<mark], String(text[text.index(after: mark)...]))
    }

    /// Version 2 letters: at least one, each at most once, in the order c r u d s.
    private static func letters(_ text: String) -> Set<Interaction>? {
        guard !text.isEmpty else { return nil }
        var remaining = Interaction.allCases[...]
        var found = Set<Interaction>()
        for letter in text {
            guard let index = remaining.firstIndex(where: { $0.rawValue == letter }) else { return nil }
            found.insert(remaining[index])
            remaining = remaining[remaining.index(after: index)...]
        }
        return found
    }
}
