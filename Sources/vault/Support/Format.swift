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

    /// A two-column table of claims, sorted by name, dates in local time.
    static func table(_ claims: [String: JSONValue]) -> String {
        let width = min(claims.keys.map(\.count).max() ?? 0, 24)
        return claims.keys.sorted().map { key in
            let value = claims[key]!
            var shown = plain(value)
            if dateClaims.contains(key), let date = value.dateValue { shown = localDate(date) }
            return "  " + key.padding(toLength: max(width, key.count), withPad: " ", startingAt: 0) + "  " + shown
        }
        .joined(separator: "\n")
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

    /// Compact JSON with sorted keys; whole numbers without a fraction.
    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A JSONValue holds only finite numbers, strings, Booleans, nulls, arrays and objects: encoding cannot fail.
        return String(decoding: try! encoder.encode(value), as: UTF8.self)
    }
}
