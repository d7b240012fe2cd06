import Foundation
import GRDB
import NIOConcurrencyHelpers
import VaultCrypto

/// Sessions (refresh-token families, kept in SQLite), authorization codes and revoked access
/// tokens (kept in memory: a code lives a minute and an access token minutes).
///
/// One lock covers them: a rotation reads and replaces the family's current token id as one step,
/// so of two requests presenting the same refresh token exactly one wins.
final class SessionStore: Sendable {
    private let state: StateStore
    private let sessions: NIOLockedValueBox<[String: Session]>
    private let codes = NIOLockedValueBox<[String: AuthorizationCode]>([:])
    private let revokedAccessTokens = NIOLockedValueBox<Set<String>>([])

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
        let rows = try state.database.read { db in try Row.fetchAll(db, sql: "SELECT * FROM refresh_family") }
        var sessions: [String: Session] = [:]
        for row in rows {
            let session = Session(
                id: row["id"],
                subject: row["subject"],
                username: row["username"],
                clientId: row["client_id"],
                scope: row["scope"],
                loginProvider: row["login_provider"],
                authTime: Date(timeIntervalSince1970: row["auth_time"]),
                currentRefreshTokenId: row["current_jti"],
                revoked: row["revoked"]
            )
            sessions[session.id] = session
        }
        self.sessions = NIOLockedValueBox(sessions)
    }

    /// Starts a session for `user` at `clientId` and stores it.
    func startSession(
        id: String = SessionStore.newSessionId(),
        user: MockUser,
        clientId: String,
        scope: String,
        at now: Date
    ) throws -> Session {
        let session = Session(
            id: id,
            subject: user.subject,
            username: user.username,
            clientId: clientId,
            scope: scope,
            loginProvider: user.loginProvider,
            authTime: now,
            currentRefreshTokenId: Self.newTokenId(),
            revoked: false
        )
        try sessions.withLockedValue { sessions in
            try state.database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO refresh_family (id, subject, username, client_id, scope, login_provider,
                                                    auth_time, current_jti, revoked)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
                        """,
                    arguments: [
                        session.id, session.subject, session.username, session.clientId, session.scope,
                        session.loginProvider, session.authTime.timeIntervalSince1970, session.currentRefreshTokenId,
                    ]
                )
            }
            sessions[session.id] = session
        }
        return session
    }

    /// Rotates the session's refresh token if `tokenId` is its current one.
    ///
    /// Presenting a token that was already rotated away revokes the whole family (RFC 9700
    /// section 4.14): either the client or an attacker holds a stale copy, and the server cannot tell which.
    func rotate(sessionId: String, presentedTokenId tokenId: String) throws -> Rotation {
        try sessions.withLockedValue { sessions in
            guard var session = sessions[sessionId] else { return .unknownSession }
            if session.revoked { return .ended }
            guard session.currentRefreshTokenId == tokenId else {
                try store(revoked: true, sessionId: sessionId)
                session.revoked = true
                sessions[sessionId] = session
                return .reused
            }
            let next = Self.newTokenId()
            try state.database.write { db in
                try db.execute(
                    sql: "UPDATE refresh_family SET current_jti = ? WHERE id = ?",
                    arguments: [next, sessionId]
                )
            }
            session.currentRefreshTokenId = next
            sessions[sessionId] = session
            return .rotated(session)
        }
    }

    /// Ends the session: no refresh token of its family works any more, nor its access tokens at userinfo.
    func revoke(sessionId: String) throws {
        try sessions.withLockedValue { sessions in
            guard var session = sessions[sessionId], !session.revoked else { return }
            try store(revoked: true, sessionId: sessionId)
            session.revoked = true
            sessions[sessionId] = session
        }
    }

    /// The session, revoked or not.
    func session(_ id: String) -> Session? {
        sessions.withLockedValue { $0[id] }
    }

    private func store(revoked: Bool, sessionId: String) throws {
        try state.database.write { db in
            try db.execute(sql: "UPDATE refresh_family SET revoked = ? WHERE id = ?", arguments: [revoked, sessionId])
        }
    }

    // MARK: Authorization codes

    /// Keeps `code` under a new random code value, which it returns.
    func issue(_ code: AuthorizationCode, at now: Date) -> String {
        let value = Base64URL.encode(SecureRandom.bytes(count: 32))
        codes.withLockedValue { codes in
            codes = codes.filter { $0.value.expiresAt > now }
            codes[value] = code
        }
        return value
    }

    /// Consumes the code for an exchange that will start the session `sessionId`.
    ///
    /// A code works once: the first exchange gets it, a later one learns which session the first
    /// started (to revoke it, RFC 6749 section 4.1.2), and a failed first exchange consumes it too.
    func claim(_ value: String, forSession sessionId: String, at now: Date) -> CodeClaim {
        codes.withLockedValue { codes in
            guard var code = codes[value], code.expiresAt > now else { return .invalid }
            if let earlier = code.sessionId { return .reused(sessionId: earlier) }
            code.sessionId = sessionId
            codes[value] = code
            return .fresh(code)
        }
    }

    // MARK: Access tokens

    func revokeAccessToken(_ tokenId: String) {
        _ = revokedAccessTokens.withLockedValue { $0.insert(tokenId) }
    }

    func isAccessTokenRevoked(_ tokenId: String) -> Bool {
        revokedAccessTokens.withLockedValue { $0.contains(tokenId) }
    }

    static func newSessionId() -> String {
        UUID().uuidString.lowercased()
    }

    static func newTokenId() -> String {
        Base64URL.encode(SecureRandom.bytes(count: 16))
    }
}
