/// A JSON value as a token wrote it: a ``JSONValue`` whose numbers keep their text, so an integer past 2^53
/// (`1180591620717411303424`) is shown as written, not rounded through a `Double`. For printing what a token says
/// (`credential-vault decode --json`); everything that acts on a value reads ``JSONValue``.
package enum ExactJSONValue: Sendable, Hashable, StrictJSONTree {
    /// A JSON string.
    case string(String)
    /// A JSON number, as written in the document; always one a `Double` holds finitely.
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// A JSON array.
    case array([ExactJSONValue])
    /// A JSON object.
    case object([String: ExactJSONValue])

    init?(numberLiteral text: String) {
        // The same numbers as JSONValue accepts: a token's values are refused or kept alike by both.
        guard let value = Double(text), value.isFinite else { return nil }
        self = .number(text)
    }

    /// The members, or `nil` for any other kind of value.
    package var objectValue: [String: ExactJSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
