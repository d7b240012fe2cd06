import CredentialVault
import Foundation

/// How claims, dates and JSON are shown.
enum Format {
    /// Claims whose numbers are NumericDates, shown in local time in tables.
    static let dateClaims: Set<String> = ["exp", "iat", "nbf", "auth_time", "updated_at"]

    /// `2025-01-31 14:05:09 +0100 (in 4 min)`: local time with the distance from now.
    static func localDate(_ date: Date, now: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss ZZZ"
        formatter.timeZone = .current
        return "\(formatter.string(from: date)) (\(relative(date, now: now)))"
    }

    /// `in 4 min`, `3 s ago`.
    static func relative(_ date: Date, now: Date = Date()) -> String {
        let seconds = Int(date.timeIntervalSince(now).rounded())
        let magnitude = abs(seconds)
        if magnitude < 2 { return "now" }
        let text =
            switch magnitude {
            case ..<120: "\(magnitude) s"
            case ..<7200: "\(magnitude / 60) min"
            case ..<172_800: "\(magnitude / 3600) h"
            default: "\(magnitude / 86_400) days"
            }
        return seconds >= 0 ? "in \(text)" : "\(text) ago"
    }

    /// `until 2025-... (in 5 min)`, or `without an expiry`.
    static func validity(_ expiry: Date?) -> String {
        expiry.map { "until \(localDate($0))" } ?? "without an expiry"
    }

    /// A two-column table of claims, sorted by name, dates in local time, names and values with their terminal
    /// controls escaped (a claim is untrusted text).
    static func table(_ claims: [String: JSONValue]) -> String {
        let rows = claims.keys.sorted().map { key in
            let value = claims[key]!
            var shown = plain(value)
            if dateClaims.contains(key) {
                if let date = value.dateValue {
                    shown = localDate(date)
                } else if let problem = numericDateProblem(value) {
                    shown += "  (malformed: \(problem))"
                }
            }
            return (name: escapingControlCharacters(key), value: escapingControlCharacters(shown))
        }
        let width = min(rows.map(\.name.count).max() ?? 0, 24)
        return rows.map { row in
            "  " + row.name.padding(toLength: max(width, row.name.count), withPad: " ", startingAt: 0) + "  "
                + row.value
        }
        .joined(separator: "\n")
    }

    /// Why `value` is not an RFC 7519 NumericDate, as `JWT(token:)` says when it refuses one; nil when it is one.
    static func numericDateProblem(_ value: JSONValue) -> String? {
        guard value.dateValue == nil else { return nil }
        return value.doubleValue == nil ? "not a JSON number" : "a number outside the years 1970 to 9999"
    }

    /// A value for a table: strings bare, arrays of strings space-separated, the rest as JSON.
    static func plain(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .array(let items) where items.allSatisfy({ $0.stringValue != nil }):
            items.compactMap(\.stringValue).joined(separator: " ")
        default: json(value)
        }
    }

    /// Compact JSON with sorted keys, every number exactly as the document wrote it; no raw terminal control in
    /// strings. Strings are written by `JSONEncoder`, the structure and the numbers here: `JSONEncoder` would write a
    /// number through a `Double`, and `1180591620717411303424` (2^70) would come out as `1.1805916207174113e+21`.
    static func json(_ value: ExactJSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        var out = ""
        func write(_ value: ExactJSONValue) {
            switch value {
            case .null: out += "null"
            case .bool(let value): out += value ? "true" : "false"
            case .number(let text): out += text
            // A string is always encodable.
            case .string(let text): out += String(decoding: try! encoder.encode(text), as: UTF8.self)
            case .array(let elements):
                out += "["
                for (index, element) in elements.enumerated() {
                    if index > 0 { out += "," }
                    write(element)
                }
                out += "]"
            case .object(let members):
                out += "{"
                for (index, name) in members.keys.sorted().enumerated() {
                    if index > 0 { out += "," }
                    write(.string(name))
                    out += ":"
                    write(members[name]!)
                }
                out += "}"
            }
        }
        write(value)
        return escapingControlCharacters(inJSON: out)
    }

    /// Compact JSON with sorted keys; whole numbers without a fraction; no raw terminal control in strings.
    static func json(_ value: JSONValue, pretty: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
        // A JSONValue holds only finite numbers, strings, Booleans, nulls, arrays and objects: encoding cannot fail.
        return escapingControlCharacters(inJSON: String(decoding: try! encoder.encode(value), as: UTF8.self))
    }
}
