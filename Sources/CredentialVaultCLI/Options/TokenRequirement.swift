import CredentialVault
import Foundation

/// What a caller asks of the token it is handed (`--min-ttl`, `--force-refresh`): the one rule, applied by the agent
/// and by a command that unlocks by itself.
///
/// The time left is measured against the token's expiry (`exp` of a JWT, else the answer's `expires_in`); a token
/// whose expiry nobody stated is taken as it is (the library refreshes such a token at every use). A token that
/// is too short-lived is refreshed once; when the new one is too short-lived as well, the issuer's tokens cannot
/// meet the requirement and the call fails, saying so.
struct TokenRequirement: Sendable, Equatable {
    /// The `--min-ttl` (and agent `minTTL`) values accepted, in seconds: up to a day.
    static let minimumValidityRange: ClosedRange<TimeInterval> = 0...86_400

    /// Seconds the token must stay valid, from now.
    var minimumValidity: TimeInterval? = nil
    /// Whether a new token must be asked for, whatever the kept one is worth.
    var forceRefresh = false

    /// Whether `token` is valid long enough at `now`.
    func isMet(by token: AccessToken, now: Date = Date()) -> Bool {
        guard let minimumValidity, let expiry = token.expireDate else { return true }
        return expiry.timeIntervalSince(now) >= minimumValidity
    }

    /// A token from `auth` that meets this requirement. Concurrent callers share the library's single refresh: a
    /// forced refresh joins the one in flight.
    /// - Throws: the library's errors; ``CLIError`` when a new token is still too short-lived.
    func token(from auth: Auth) async throws -> AccessToken {
        let token = try await auth.getAccessToken(forceRefresh: forceRefresh)
        if isMet(by: token) { return token }
        // Another caller may have refreshed meanwhile: take its token before asking for one more.
        let current = try await auth.getAccessToken()
        if current != token, isMet(by: current) { return current }
        return try checked(try await auth.getAccessToken(forceRefresh: true))
    }

    /// `unlocked`, just redeemed by a login (which counts as a forced refresh), when it meets this requirement;
    /// otherwise a token from `auth` as ``token(from:)`` asks for one.
    func token(from auth: Auth, unlocked: AccessToken) async throws -> AccessToken {
        if isMet(by: unlocked) { return unlocked }
        return try checked(try await auth.getAccessToken(forceRefresh: true))
    }

    private func checked(_ token: AccessToken) throws -> AccessToken {
        guard !isMet(by: token), let minimumValidity else { return token }
        let left = max(0, Int(token.expireDate?.timeIntervalSinceNow.rounded(.down) ?? 0))
        throw CLIError.other(
            "a new access token from the issuer is valid for \(left) s only, less than --min-ttl \(Int(minimumValidity)) s: "
                + "the issuer's tokens do not live that long; ask for a shorter --min-ttl"
        )
    }
}
