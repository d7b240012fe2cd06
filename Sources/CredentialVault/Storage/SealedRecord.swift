import Foundation
import VaultCrypto

/// What an envelope's token box holds: the refresh token alone (the plaintext is its UTF-8, as every envelope
/// before session contexts), or the token and its session context as one JSON record, and with them the client this
/// library registered (record version 2, which a version that cannot keep the registration does not open), the DPoP
/// key (version 3) and the login's id token with what it says of the authentication (version 4).
///
/// Which of the two the box holds is the envelope's `payload` field, which is part of the box's associated data:
/// a box is never read as the other kind.
enum SealedRecord {
    /// `payload` of a box holding ``Record`` JSON without a registered client; nil is the token's UTF-8 alone.
    static let recordPayload = "credential-vault/record/v1"
    /// `payload` of a box holding ``Record`` JSON with a registered client. A version of the library that knows only
    /// version 1 refuses it as a newer format instead of sealing the token again without the client.
    static let clientRecordPayload = "credential-vault/record/v2"
    /// `payload` of a box holding ``Record`` JSON with a DPoP key (and maybe a registered client). A version that
    /// knows no DPoP refuses it instead of sealing the token again without its key, which would strand the login.
    static let dpopRecordPayload = "credential-vault/record/v3"
    /// `payload` of a box holding ``Record`` JSON with the login's id token and ``LoginContext`` (and maybe a
    /// registered client and a DPoP key). A version that knows no login context refuses it instead of sealing the
    /// token again without them, which would lose the `id_token_hint` and the step-up state.
    static let loginRecordPayload = "credential-vault/record/v4"
    /// Every payload this version reads.
    static let payloads: Set<String> = [recordPayload, clientRecordPayload, dpopRecordPayload, loginRecordPayload]

    private struct Record: Codable {
        let refresh_token: String
        let context: [String: JSONValue]
        let client: ClientRegistration.Sealed?
        /// The DPoP private key (``DPoPKey``), base64url; only in ``dpopRecordPayload`` and ``loginRecordPayload``
        /// records.
        let dpop_key: String?
        /// The login's id token and context; exactly in ``loginRecordPayload`` records.
        let login: Login?
    }

    /// The login part of a version 4 record: the latest id token (compact JWS) and ``LoginContext``.
    private struct Login: Codable {
        let id_token: String?
        let acr: String?
        let amr: [String]
        /// Unix seconds.
        let auth_time: Double?
        let acr_values: [String]

        init(idToken: String?, context: LoginContext?) {
            id_token = idToken
            acr = context?.acr
            amr = context?.amr ?? []
            auth_time = context?.authTime?.timeIntervalSince1970
            acr_values = context?.requestedACRValues ?? []
        }

        var context: LoginContext {
            LoginContext(
                acr: acr,
                amr: amr,
                authTime: auth_time.map { Date(timeIntervalSince1970: $0) },
                requestedACRValues: acr_values
            )
        }
    }

    /// The plaintext to seal for `token`, and the payload to name in the envelope.
    static func plaintext(of token: RefreshToken) -> (plaintext: SecureBytes, payload: String?) {
        let login = token.idToken != nil || token.loginContext != nil
        guard !token.context.isEmpty || token.client != nil || token.dpopKey != nil || login else {
            return (SecureBytes(Data(token.token.utf8)), nil)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A number that is not finite has no JSON form: it is kept as null. Then every value encodes.
        let context = token.context.mapValues(finite)
        let client = token.client.map { $0.sealed }
        let record = Record(
            refresh_token: token.token,
            context: context,
            client: client,
            dpop_key: token.dpopKey?.sealed,
            login: login ? Login(idToken: token.idToken, context: token.loginContext) : nil
        )
        var data = try! encoder.encode(record)
        defer { data.resetBytes(in: 0..<data.count) }
        let payload =
            login
            ? loginRecordPayload
            : token.dpopKey != nil ? dpopRecordPayload : client == nil ? recordPayload : clientRecordPayload
        return (SecureBytes(data), payload)
    }

    /// `value` with every number that is not finite (NaN, infinity) replaced by null.
    static func finite(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let number) where !number.isFinite: .null
        case .array(let items): .array(items.map(finite))
        case .object(let members): .object(members.mapValues(finite))
        default: value
        }
    }

    /// The refresh token of `userId` in an opened box; nil when the plaintext is not what `payload` says.
    static func token(from plaintext: SecureBytes, payload: String?, userId: String) -> RefreshToken? {
        switch payload {
        case nil:
            guard let text = plaintext.utf8String(), !text.isEmpty else { return nil }
            return RefreshToken(token: text, userId: userId)
        case recordPayload, clientRecordPayload, dpopRecordPayload, loginRecordPayload:
            var data = plaintext.copyToData()
            // The copy holds the refresh token and the id token: zeroed once decoded.
            defer { data.resetBytes(in: 0..<data.count) }
            guard let record = try? UntrustedJSON.decode(Record.self, from: data), !record.refresh_token.isEmpty
            else { return nil }
            // The payload says whether a client is sealed: a box that disagrees is not what its header says.
            let client = record.client.flatMap(ClientRegistration.init(sealed:))
            // Likewise the DPoP key: present exactly in a v3 record (and maybe in a v4), and a key that does not
            // load is no record.
            let dpopKey = record.dpop_key.flatMap(DPoPKey.init(sealed:))
            guard (dpopKey == nil) == (record.dpop_key == nil) else { return nil }
            if record.client != nil, client == nil { return nil }
            // The login part: exactly in a v4 record, which may hold a client and a DPoP key or neither.
            guard (record.login != nil) == (payload == loginRecordPayload) else { return nil }
            if record.login == nil {
                guard (dpopKey != nil) == (payload == dpopRecordPayload) else { return nil }
                if payload != dpopRecordPayload, (client != nil) != (payload == clientRecordPayload) { return nil }
            }
            // The id token only informs (``Auth/idToken``, the end-session hint): it is read as a JWT where it is
            // used, so one that no longer reads as one (a stricter parser in a later version) is never the login's
            // id token and never sent, and it never stops the login from opening.
            let idToken = record.login?.id_token
            return RefreshToken(
                token: record.refresh_token,
                userId: userId,
                context: record.context,
                client: client,
                dpopKey: dpopKey,
                loginContext: record.login?.context,
                idToken: idToken
            )
        default:
            return nil
        }
    }
}
