/// The transport the library uses when a caller gives none.
///
/// On Linux an ``AsyncHTTPClientTransport``: every call shares the process's one client for the same trust roots
/// and proxy, so connections are reused across every `Vault`, `Auth`, key service, SMART and FHIR caller. On Apple
/// platforms a ``URLSessionTransport``, which keeps the system's certificate evaluation: extra `trustRoots` are not
/// used there (install the authority in the system's trust settings, or give your own transport), and pinned ones
/// (``TrustRoots/onlyThese``) give a ``RefusingTransport`` that fails every request, rather than connect trusting
/// more authorities than the app asked for.
public enum DefaultHTTPTransport {
    /// The default transport, trusting `trustRoots` besides (or, when pinned, instead of) the system's authorities,
    /// with the proxies set in this process's environment. Cheap: it makes no connection and no client.
    public static func make(trustRoots: TrustRoots? = nil) -> any HTTPTransport {
        #if canImport(AsyncHTTPClient)
        return AsyncHTTPClientTransport(trustRoots: trustRoots)
        #else
        if let trustRoots, trustRoots.onlyThese {
            return RefusingTransport(
                reason: "pinned trust roots are not supported by URLSession on this platform: "
                    + "give the vault an HTTPTransport that pins"
            )
        }
        return URLSessionTransport.shared
        #endif
    }
}
