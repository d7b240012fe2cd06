/// The transport the library uses when a caller gives none.
///
/// On Linux an ``AsyncHTTPClientTransport``: every call shares the process's one client for the same trust roots
/// and proxy, so connections are reused across every `Vault`, `Auth`, key service, SMART and FHIR caller. On Apple
/// platforms a ``URLSessionTransport`` (which keeps the system's certificate evaluation: `trustRoots` is not used).
public enum DefaultHTTPTransport {
    /// The default transport, trusting `trustRoots` besides (or, when pinned, instead of) the system's authorities,
    /// with the proxies set in this process's environment. Cheap: it makes no connection and no client.
    public static func make(trustRoots: TrustRoots? = nil) -> any HTTPTransport {
        #if canImport(AsyncHTTPClient)
        AsyncHTTPClientTransport(trustRoots: trustRoots)
        #else
        URLSessionTransport.shared
        #endif
    }
}
