import Foundation
import GRDB
import NIOConcurrencyHelpers
import VaultCrypto

/// Sessions (refresh-token families, kept in SQLite), authorization codes and revoked access
/// tokens (kept in memory: a code lives a minute and an access token minutes).
///
/// Every id is kept as its keyed hash under the pepper (``StateStore/hash(_:as:)``), never in clear: a
/// copy of the database or of this process's tables does not give a usable session, token or code id.
/// One lock covers the sessions: a rotation reads and replaces the family's current token hash as one
/// step, so of two requests presenting the same refresh token exactly one wins.
final class SessionStore: Sendable {
    private let state: StateStore
    /// Keyed by the hash of the session id.
    private let sessions: NIOLockedValueBox<[Data: SessionRecord]>
    /// Keyed by the hash of the code.
    private let codes = NIOLockedValueBox<[Data: AuthorizationCode]>([:])
    /// Hashes of the `jti` of revoked access tokens.
    private let revokedAccessTokens = NIOLockedValueBox<Set<Data>>([])

    /// What claiming an authorization code gave.
    enum CodeClaim: Sendable {
        case fresh(AuthorizationCode)
        /// The code was exchanged before, and started this session.
        case reused(sessionId: String)
        case invalid
    }

    /// What presenting a refresh token gave.
    enum Rotation: Sendable {
        case rotated(Session)
        case unknownSession
        case ended
        /// The token was already rotated away: the whole family is now revoked.
        case reused
    }

    init(state: StateStore) throws {
        self.state = state
        let rows = try state.database.read { db in try Row.fetchAll(db, sql: "SELECT * FROM session") }
        var sessions: [Data: SessionRecord] = [:]
        for row in rows {
            sessions[row["id_hash"]] = SessionRecord(
                subject: row["subject"],
                username: row["username"],
                clientId: row["client_id"],
                scope: row["scope"],
                loginProvider: row["login_provider"],
                authTime: Date(timeIntervalSince1970: row["auth_time"]),
                refreshTokenHash: row["refresh_token_hash"],
                revoked: row["revoked"]
            )
        }
        self.sessions = NIOLockedValueBox(sessions)
    }

    /// Starts a session for `user` at `clientId` and stores it; the user authenticated at `authenticatedAt`
    /// (`now` when nil).
    func startSession(
        id: String = SessionStore.newSessionId(),
        user: MockUser,
        clientId: String,
        scope: String,
        at now: Date,
        authenticatedAt: Date? = nil
    ) throws -> Session {
        let refreshTokenId = Self.newTokenId()
        let record = SessionRecord(
            subject: user.subject,
            username: user.username,
            clientId: clientId,
            scope: scope,
            loginProvider: user.loginProvider,
            authTime: authenticatedAt ?? now,
            refreshTokenHash: state.hash(refreshTokenId, as: .refreshToken),
            revoked: false
        )
        let idHash = state.hash(id, as: .session)
        try sessions.withLockedValue { sessions in
            try state.database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO session (id_hash, subject, username, client_id, scope, login_provider, auth_time,
                                             refresh_token_hash, revoked)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
                        """,
                    arguments: [
                        idHash, record.subject, record.username, record.clientId, record.scope,
                        record.loginProvider, record.authTime.timeIntervalSince1970, record.refreshTokenHash,
                    ]
                )
            }
            sessions[idHash] = record
        }
        return Session(id: id, record: record, refreshTokenId: refreshTokenId)
    }

    /// Rotates the session's refresh token if `tokenId` is its current one.
    ///
    /// Presenting a token that was already rotated away revokes the whole family (RFC 9700
    /// section 4.14): either the client or an attacker holds a stale copy, and the server cannot tell which.
    func rotate(sessionId: String, presentedTokenId tokenId: String) throws -> Rotation {
        let idHash = state.hash(sessionId, as: .session)
        let presentedHash = state.hash(tokenId, as: .refreshToken)
        return try sessions.withLockedValue { sessions in
            guard var record = sessions[idHash] else { return .unknownSession }
            if record.revoked { return .ended }
            guard ConstantTime.equal(record.refreshTokenHash, presentedHash) else {
                try store(revokedSession: idHash)
                record.revoked = true
                sessions[idHash] = record
                return .reused
            }
            let next = Self.newTokenId()
            let nextHash = state.hash(next, as: .refreshToken)
            try state.database.write { db in
                try db.execute(
                    sql: "UPDATE session SET refresh_token_hash = ? WHERE id_hash = ?",
                    arguments: [nextHash, idHash]
                )
            }
            record.refreshTokenHash = nextHash
            sessions[idHash] = record
            return .rotated(Session(id: sessionId, record: record, refreshTokenId: next))
        }
    }

    /// Ends the session: no refresh token of its family works any more, nor its access tokens at userinfo.
    func revoke(sessionId: String) throws {
        let idHash = state.hash(sessionId, as: .session)
        try sessions.withLockedValue { sessions in
            guard var record = sessions[idHash], !record.revoked else { return }
            try store(revokedSession: idHash)
            record.revoked = true
            sessions[idHash] = record
        }
    }

    /// Ends every session of `clientId` (a deleted registration, RFC 7592 section 2.3); returns how many.
    func revokeSessions(ofClient clientId: String) throws -> Int {
        try sessions.withLockedValue { sessions in
            var revoked = 0
            for (idHash, var record) in sessions where record.clientId == clientId && !record.revoked {
                try store(revokedSession: idHash)
                record.revoked = true
                sessions[idHash] = record
                revoked += 1
            }
            return revoked
        }
    }

    /// The session, revoked or not.
    func session(_ id: String) -> SessionRecord? {
        let idHash = state.hash(id, as: .session)
        return sessions.withLockedValue { $0[idHash] }
    }

    private func store(revokedSession idHash: Data) throws {
        try state.database.write { db in
            try db.execute(sql: "UPDATE session SET revoked = 1 WHERE id_hash = ?", arguments: [idHash])
        }
    }

    // MARK: Authorization codes

    /// Keeps `code` under a new random code value, which it returns.
    func issue(_ code: AuthorizationCode, at now: Date) -> String {
        let value = Base64URL.encode(SecureRandom.bytes(count: 32))
        let valueHash = state.hash(value, as: .authorizationCode)
        codes.withLockedValue { codes in
            codes = codes.filter { $0.value.expiresAt > now }
            codes[valueHash] = code
        }
        return value
    }

    /// Consumes the code for an exchange that will start the session `sessionId`.
    ///
    /// A code works once: the first exchange gets it, a later one learns which session the first
    /// started (to revoke it, RFC 6749 section 4.1.2), and a failed first exchange consumes it too.
    func claim(_ value: String, forSession sessionId: String, at now: Date) -> CodeClaim {
        let valueHash = state.hash(value, as: .authorizationCode)
        return codes.withLockedValue { codes in
            guard var code = codes[valueHash], code.expiresAt > now else { return .invalid }
            if let earlier = code.sessionId { return .reused(sessionId: earlier) }
            code.sessionId = sessionId
            codes[valueHash] = code
            return .fresh(code)
        }
    }

    // MARK: Access tokens

    func revokeAccessToken(_ tokenId: String) {
        let tokenHash = state.hash(tokenId, as: .accessToken)
        _ = revokedAccessTokens.withLockedValue { $0.insert(tokenHash) }
    }

    func isAccessTokenRevoked(_ tokenId: String) -> Bool {
        let tokenHash = state.hash(tokenId, as: .accessToken)
        return revokedAccessTokens.withLockedValue { $0.contains(tokenHash) }
    }

    static func newSessionId() -> String {
        UUID().uuidString.lowercased()
    }

    static func newTokenId() -> String {
        Base64URL.encode(SecureRandom.bytes(count: 16))
    }
}
