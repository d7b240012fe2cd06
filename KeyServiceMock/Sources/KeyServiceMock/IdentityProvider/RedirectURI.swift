import Foundation

/// Redirect URI matching: exact, except that a loopback URI matches on any port (RFC 8252 section 7.3),
/// because a native app's loopback listener gets whatever port is free.
enum RedirectURI {
    static func matches(_ presented: String, registered: String) -> Bool {
        if presented == registered { return true }
        guard let presentedParts = URLComponents(string: presented),
            let registeredParts = URLComponents(string: registered),
            registeredParts.scheme == "http", presentedParts.scheme == "http",
            let host = registeredParts.host, Loopback.isRedirectHost(host),
            presentedParts.host == host,
            presentedParts.user == nil, presentedParts.password == nil, presentedParts.fragment == nil
        else { return false }
        return presentedParts.percentEncodedPath == registeredParts.percentEncodedPath
            && presentedParts.percentEncodedQuery == registeredParts.percentEncodedQuery
    }

    static func isRegistered(_ presented: String, for client: MockClient) -> Bool {
        client.redirectURIs.contains { matches(presented, registered: $0) }
    }

    /// `uri` with `parameters` appended to its query, each name and value percent-encoded.
    static func appending(_ parameters: [(String, String?)], to uri: String) -> String {
        let query = parameters.compactMap { name, value in
            value.map { "\(name)=\(PercentEncoding.encode($0))" }
        }.joined(separator: "&")
        guard !query.isEmpty else { return uri }
        return uri + (uri.contains("?") ? "&" : "?") + query
    }
}
