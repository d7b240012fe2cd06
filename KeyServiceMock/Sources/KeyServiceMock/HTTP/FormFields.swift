import KeyServiceCore

/// Fields of a query string or form body; a field sent twice is refused (RFC 6749 section 3.1).
struct FormFields {
    private var values: [String: String] = [:]

    /// Parses `name=value&...`.
    /// - Throws: ``RequestRefusal`` (400) for invalid percent-encoding or a field sent twice.
    init(encoded: String) throws {
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decodeFormComponent(parts[0]),
                let value = PercentEncoding.decodeFormComponent(parts.count > 1 ? parts[1] : "")
            else {
                throw RequestRefusal.invalidRequest("a form field is not valid percent-encoding")
            }
            guard values[name] == nil else {
                throw RequestRefusal.invalidRequest("the parameter \(name) is sent more than once")
            }
            values[name] = value
        }
    }

    /// The value of `name`; an empty value counts as absent.
    subscript(name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// The value of `name`, which must be present.
    func required(_ name: String) throws -> String {
        guard let value = self[name] else {
            throw RequestRefusal.invalidRequest("the parameter \(name) is missing")
        }
        return value
    }
}
