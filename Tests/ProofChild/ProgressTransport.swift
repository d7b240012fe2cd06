import CredentialVault
import Foundation
import Synchronization
import VaultCrypto

/// The child's transport: the default transport underneath (trusting ``EnvironmentTrustRoots``), and a line before every refresh_token grant goes out
/// (`requesting N`) and as soon as its answer with a rotated refresh token is back (`received N FINGERPRINT`),
/// before the library sees it. A kill after `received N` and before the caller's `sealed N` landed in the
/// window between the issuer's rotation and the fsync.
final class ProgressTransport: HTTPTransport {
    private let inner = DefaultHTTPTransport.make(trustRoots: EnvironmentTrustRoots.roots)
    private let fingerprintKey: SecureBytes
    private let grants = Mutex(0)

    init(fingerprintKey: SecureBytes) {
        self.fingerprintKey = fingerprintKey
    }

    /// Rotated refresh tokens received so far.
    var received: Int { grants.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let body = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard body.split(separator: "&").contains("grant_type=refresh_token") else {
            return try await inner.send(request)
        }
        let number = grants.withLock { $0 } + 1
        Progress.say("requesting \(number)")
        let response = try await inner.send(request)
        if response.status == 200,
            let answer = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let token = answer["refresh_token"] as? String
        {
            grants.withLock { $0 = number }
            Progress.say("received \(number) \(TokenFingerprint.of(token, key: fingerprintKey))")
        }
        return response
    }
}
