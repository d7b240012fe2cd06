import Foundation
import NIOConcurrencyHelpers
import VaultCrypto

/// The SMART mode's memory: EHR launch ids waiting for their authorization request, the launch context of
/// each session, and the opaque access tokens.
///
/// All of it is in memory only, like authorization codes, and every id and token is kept as its keyed hash
/// under the pepper. A session's context is therefore lost on a restart: refreshes of a login from before it
/// carry no patient or encounter.
final class SMARTStore: Sendable {
    private let state: StateStore
    /// Keyed by the hash of the launch id; removed when used.
    private let launches = NIOLockedValueBox<[Data: LaunchContext]>([:])
    /// Keyed by the hash of the session id.
    private let contexts = NIOLockedValueBox<[Data: LaunchContext]>([:])
    /// Keyed by the hash of the token.
    private let accessTokens = NIOLockedValueBox<[Data: OpaqueAccessToken]>([:])

    init(state: StateStore) {
        self.state = state
    }

    // MARK: EHR launches

    /// Keeps an EHR launch for `patient` and `encounter` under a new random id, which it returns.
    func createLaunch(patient: String, encounter: String?) -> String {
        // Hex, so an id never begins with `-` and reads as an option on a command line.
        let id = SecureRandom.bytes(count: 16).map { String(format: "%02x", $0) }.joined()
        let context = LaunchContext(patient: patient, encounter: encounter, isEHRLaunch: true)
        launches.withLockedValue { $0[state.hash(id, as: .ehrLaunch)] = context }
        return id
    }

    /// The launch `id` names, consumed: a launch id works once.
    func consumeLaunch(_ id: String) -> LaunchContext? {
        let idHash = state.hash(id, as: .ehrLaunch)
        return launches.withLockedValue { $0.removeValue(forKey: idHash) }
    }

    // MARK: Session contexts

    func setContext(_ context: LaunchContext, forSession sessionId: String) {
        let idHash = state.hash(sessionId, as: .session)
        contexts.withLockedValue { $0[idHash] = context }
    }

    /// The context the session's first grant selected; ``LaunchContext/none`` when it had none.
    func context(forSession sessionId: String) -> LaunchContext {
        let idHash = state.hash(sessionId, as: .session)
        return contexts.withLockedValue { $0[idHash] } ?? .none
    }

    // MARK: Opaque access tokens

    /// Keeps `token` under a new random value, which it returns: 32 random bytes, base64url.
    func issue(_ token: OpaqueAccessToken, at now: Date) -> String {
        let value = Base64URL.encode(SecureRandom.bytes(count: 32))
        let valueHash = state.hash(value, as: .opaqueAccessToken)
        accessTokens.withLockedValue { tokens in
            tokens = tokens.filter { $0.value.expiresAt > now }
            tokens[valueHash] = token
        }
        return value
    }

    /// The token `value` names, if it is known and not expired at `now`.
    func accessToken(_ value: String, at now: Date) -> OpaqueAccessToken? {
        let valueHash = state.hash(value, as: .opaqueAccessToken)
        return accessTokens.withLockedValue { tokens in
            guard let token = tokens[valueHash], token.expiresAt > now else { return nil }
            return token
        }
    }

    /// Forgets every access token issued to `clientId` (a deleted registration); returns how many.
    func revokeAccessTokens(ofClient clientId: String) -> Int {
        accessTokens.withLockedValue { tokens in
            let before = tokens.count
            tokens = tokens.filter { $0.value.clientId != clientId }
            return before - tokens.count
        }
    }

    /// Forgets the token `value` names (RFC 7009 revocation); returns what it was, `nil` when unknown.
    @discardableResult
    func revokeAccessToken(_ value: String) -> OpaqueAccessToken? {
        let valueHash = state.hash(value, as: .opaqueAccessToken)
        return accessTokens.withLockedValue { $0.removeValue(forKey: valueHash) }
    }
}
