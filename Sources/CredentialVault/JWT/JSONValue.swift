public import struct Foundation.Date

/// A JSON value as decoded from a JWT header or claims set.
///
/// Numbers are `Double`s (as in JavaScript and RFC 8259's interoperable range); they are
/// always finite. Objects never hold a member name twice.
public enum JSONValue: Sendable, Hashable {
    /// A JSON string.
    case string(String)
    /// A JSON number, always finite.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// A JSON array.
    case array([JSONValue])
    /// A JSON object.
    case object([String: JSONValue])
}

extension JSONValue {
    /// The string, or `nil` for any other kind of value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, or `nil` for any other kind of value.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number when it is a whole number that fits in `Int`, else `nil` (`1.5` and `1e300` give `nil`).
    public var intValue: Int? {
        guard let value = doubleValue else { return nil }
        return Int(exactly: value)
    }

    /// The Boolean, or `nil` for any other kind of value.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, or `nil` for any other kind of value.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, or `nil` for any other kind of value.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements when this is an array made only of strings, else `nil`.
    public var stringArrayValue: [String]? {
        guard let elements = arrayValue else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard let string = element.stringValue else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// The number read as an RFC 7519 NumericDate (seconds since 1970-01-01T00:00:00Z), or `nil`
    /// for anything else or for a number outside ``JWT/numericDateRange``.
    public var dateValue: Date? {
        guard let seconds = doubleValue, JWT.numericDateRange.contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// `true` for `null`.
    public var isNull: Bool { self == .null }

    /// The member named `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The value as `Value`, or `nil` when it does not have that shape.
    ///
    /// Supported: `JSONValue`, `String`, `Int`, `Double`, `Bool`, `Date` (from a NumericDate),
    /// `[String]`, `[JSONValue]` and `[String: JSONValue]`.
    func converted<Value>(to type: Value.Type) -> Value? {
        switch type {
        case is JSONValue.Type: self as? Value
        case is String.Type: stringValue as? Value
        case is Int.Type: intValue as? Value
        case is Double.Type: doubleValue as? Value
        case is Bool.Type: boolValue as? Value
        case is Date.Type: dateValue as? Value
        case is [String].Type: stringArrayValue as? Value
        case is [JSONValue].Type: arrayValue as? Value
        case is [String: JSONValue].Type: objectValue as? Value
        default: nil
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// A `.number`.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A `.number`.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An `.object`; a literal with a repeated key keeps the last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
