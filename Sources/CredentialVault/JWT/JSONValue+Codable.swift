/// JSON in and out through `Codable`. The places that write JSON directly write what a login writes, or bytes that
/// matter: the key-service request, the envelope and the record sealed in it (``JSONWriter``), and the RFC 7638
/// thumbprint input (``DPoPKey``).
///
/// A token's claims, the token endpoint's and key service's answers, the envelope and its sealed record are read by
/// the strict parser (``JWT/init(token:)``, ``UntrustedJSON/members(from:maximumSize:)``), which refuses duplicate
/// names that `JSONDecoder` lets through.
extension JSONValue: Codable {
    /// Decodes any JSON value; a number that is not finite is refused.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            guard value.isFinite else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a number that is not finite")
            }
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value; a whole number is written without a fraction (`3`, not `3.0`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if let whole = Int64(exactly: value) { try container.encode(whole) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
