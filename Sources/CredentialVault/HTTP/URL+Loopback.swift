import Foundation
import VaultPOSIX

extension URL {
    /// The host as people may see it: percent-encoded (so no control character reaches a terminal) and
    /// at most 253 characters.
    package var displayHost: String {
        let host = host(percentEncoded: true) ?? absoluteString
        return String(host.prefix(253))
    }

    /// https, or http to a loopback IP literal: a URL the library may send secrets to.
    package var isSecureOrLoopback: Bool {
        scheme?.lowercased() == "https" ? host?.isEmpty == false : isPlainLoopback
    }

    /// Plain http to a loopback IP literal: the only plain http the library sends.
    var isPlainLoopback: Bool {
        scheme?.lowercased() == "http" && (host.map(Loopback.isAddress) ?? false)
    }

    /// An http redirect URI on this machine, answered by the library's loopback listener.
    var isLoopbackRedirect: Bool {
        scheme?.lowercased() == "http" && (host.map(Loopback.isRedirectHost) ?? false)
    }
}
