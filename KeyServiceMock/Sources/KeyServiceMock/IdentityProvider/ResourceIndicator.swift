import Foundation
import KeyServiceCore

/// RFC 8707 resource indicators as this provider takes them: an absolute https URL, or an http URL at a loopback
/// host, without a fragment. Any such resource is accepted (the mock keeps no list) and becomes the access token's
/// `aud`; anything else is refused with `invalid_target`.
enum ResourceIndicator {
    /// The audience `resource` names, nil when the request names none.
    /// - Throws: ``RequestRefusal`` `invalid_target` for a value that is not such a URL.
    static func audience(_ resource: String?) throws -> String? {
        guard let resource else { return nil }
        guard let url = URL(string: resource), url.fragment == nil, let host = url.host, !host.isEmpty,
            url.scheme == "https" || (url.scheme == "http" && loopbackHosts.contains(host))
        else {
            throw RequestRefusal.oauth(
                "invalid_target",
                "the resource must be an absolute https URL (or http at a loopback address) without a fragment"
            )
        }
        return resource
    }

    private static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1", "[::1]"]
}
