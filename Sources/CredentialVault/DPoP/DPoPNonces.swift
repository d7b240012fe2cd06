public import Foundation
import Synchronization

/// The newest `DPoP-Nonce` each server gave (RFC 9449 sections 8 and 9), kept by origin (scheme, host and port), so
/// the next proof to that server carries it. Shared by the requests of one ``Auth``.
public final class DPoPNonces: Sendable {
    private let nonces = Mutex<[String: String]>([:])

    /// An empty store.
    public init() {}

    /// The nonce the server of `url` gave last, if any.
    public func nonce(for url: URL) -> String? {
        nonces.withLock { $0[Self.origin(of: url)] }
    }

    /// Keeps `nonce` for the server of `url`, replacing the one it gave before.
    public func remember(_ nonce: String, for url: URL) {
        // A server's nonce is short; a huge header is not kept (it would go out with every proof).
        guard !nonce.isEmpty, nonce.utf8.count <= 1024 else { return }
        nonces.withLock { $0[Self.origin(of: url)] = nonce }
    }

    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
