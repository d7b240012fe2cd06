/// A JSONValue is what the strict parser builds by default: numbers as `Double`s, finite ones only.
extension JSONValue: StrictJSONTree {
    init?(numberLiteral text: String) {
        guard let value = Double(text), value.isFinite else { return nil }
        self = .number(value)
    }
}
