/// A JSON value ``StrictJSONParser`` can build: ``JSONValue``, whose numbers are `Double`s, or ``ExactJSONValue``,
/// whose numbers keep their text. The cases of either enum are the builders.
protocol StrictJSONTree {
    static func string(_ value: String) -> Self
    static func bool(_ value: Bool) -> Self
    static var null: Self { get }
    static func array(_ elements: [Self]) -> Self
    static func object(_ members: [String: Self]) -> Self
    /// The members when this is an object, else `nil`.
    var objectValue: [String: Self]? { get }

    /// The number written as `text` (RFC 8259 grammar, checked by the parser); `nil` when it is not a finite
    /// `Double`, which the parser refuses.
    init?(numberLiteral text: String)
}
