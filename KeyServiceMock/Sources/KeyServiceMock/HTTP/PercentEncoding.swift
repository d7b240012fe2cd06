import Foundation

/// Percent-encoding (RFC 3986 section 2.1), defined once for the whole server.
enum PercentEncoding {
    /// The unreserved characters (RFC 3986 section 2.3): letters, digits, `-`, `.`, `_` and `~`,
    /// the only ones never encoded.
    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )

    /// `text` with every character but the unreserved ones percent-encoded: safe as a query name or value.
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// One name or value of a query string or `application/x-www-form-urlencoded` body, where `+`
    /// is a space; `nil` when it is not valid percent-encoding.
    static func decodeFormComponent(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
