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
    /// `payload` of a box holding a JSON record without a registered client; nil is the token's UTF-8 alone.
    static let recordPayload = "credential-vault/record/v1"
    /// `payload` of a box holding a JSON record with a registered client. A version of the library that knows only
    /// version 1 refuses it as a newer format instead of sealing the token again without the client.
    static let clientRecordPayload = "credential-vault/record/v2"
    /// `payload` of a box holding a JSON record with a DPoP key (and maybe a registered client). A version that
    /// knows no DPoP refuses it instead of sealing the token again without its key, which would strand the login.
    static let dpopRecordPayload = "credential-vault/record/v3"
    /// `payload` of a box holding a JSON record with the login's id token and ``LoginContext`` (and maybe a
    /// registered client and a DPoP key). A version that knows no login context refuses it instead of sealing the
    /// token again without them, which would lose the `id_token_hint` and the step-up state.
    static let loginRecordPayload = "credential-vault/record/v4"
    /// Every payload this version reads.
    static let payloads: Set<String> = [recordPayload, clientRecordPayload, dpopRecordPayload, loginRecordPayload]

    // The record is a JSON object: `refresh_token` (a string, not empty) and `context` (an object) always; `client`
    // (``ClientRegistration/sealed``) and `dpop_key` (``DPoPKey/sealed``, base64url) when the token has them; `login`
    // exactly in a ``loginRecordPayload`` record: `amr` and `acr_values` (arrays of strings) always, `id_token`
    // (compact JWS), `acr` (strings) and `auth_time` (Unix seconds) when known. Written by ``JSONWriter`` and read by
    // the strict parser (``StrictJSONParser``), not through `Codable`: every login reads one and writes one, with every
    // cache cold after Argon2id (issue 23). `JSONEncoder` wrote the records of earlier versions: the same members,
    // which read the same.

    /// The plaintext to seal for `token`, and the payload to name in the envelope.
    static func plaintext(of token: RefreshToken) -> (plaintext: SecureBytes, payload: String?) {
        let login = token.idToken != nil || token.loginContext != nil
        guard !token.context.isEmpty || token.client != nil || token.dpopKey != nil || login else {
            return (SecureBytes(Data(token.token.utf8)), nil)
        }
        // A number in the context that is not finite has no JSON form: the writer keeps it as null.
        var record: [String: JSONValue] = ["refresh_token": .string(token.token), "context": .object(token.context)]
        record["client"] = token.client?.sealed
        record["dpop_key"] = token.dpopKey.map { .string($0.sealed) }
        if login { record["login"] = sealed(idToken: token.idToken, context: token.loginContext) }
        var bytes = JSONWriter.bytes(of: .object(record))
        // The copy holds the refresh token: zeroed once it is in the secure buffer.
        defer { JSONWriter.zero(&bytes) }
        let payload =
            login
            ? loginRecordPayload
            : token.dpopKey != nil ? dpopRecordPayload : token.client == nil ? recordPayload : clientRecordPayload
        return (SecureBytes(bytes), payload)
    }

    /// The `login` member of a version 4 record.
    private static func sealed(idToken: String?, context: LoginContext?) -> JSONValue {
        var members: [String: JSONValue] = [
            "amr": .array((context?.amr ?? []).map(JSONValue.string)),
            "acr_values": .array((context?.requestedACRValues ?? []).map(JSONValue.string)),
        ]
        members["id_token"] = idToken.map(JSONValue.string)
        members["acr"] = context?.acr.map(JSONValue.string)
        members["auth_time"] = context?.authTime.map { .number($0.timeIntervalSince1970) }
        return .object(members)
    }

    /// The DPoP key a `dpop_key` member holds (``DPoPKey/sealed``); nil when it holds none.
    private static func dpopKey(_ sealed: JSONValue) -> DPoPKey? {
        sealed.stringValue.flatMap(DPoPKey.init(sealed:))
    }

    /// The date of a number of Unix seconds; nil for any other value.
    private static func unixDate(_ seconds: JSONValue) -> Date? {
        seconds.doubleValue.map(Date.init(timeIntervalSince1970:))
    }

    /// The id token and ``LoginContext`` of a `login` member (``sealed(idToken:context:)``); nil when it is not one.
    private static func login(from sealed: JSONValue) -> (idToken: String?, context: LoginContext)? {
        guard let members = sealed.objectValue,
            let amr = members["amr"]?.stringArrayValue,
            let requested = members["acr_values"]?.stringArrayValue,
            case .some(let idToken) = UntrustedJSON.optionalString("id_token", in: members),
            case .some(let acr) = UntrustedJSON.optionalString("acr", in: members)
        else { return nil }
        guard case .some(let authTime) = UntrustedJSON.optional(members["auth_time"], Self.unixDate) else { return nil }
        return (idToken, LoginContext(acr: acr, amr: amr, authTime: authTime, requestedACRValues: requested))
    }

    /// The refresh token of `userId` in an opened box; nil when the plaintext is not what `payload` says.
    static func token(from plaintext: SecureBytes, payload: String?, userId: String) -> RefreshToken? {
        switch payload {
        case nil:
            guard let text = plaintext.utf8String(), !text.isEmpty else { return nil }
            return RefreshToken(token: text, userId: userId)
        case recordPayload, clientRecordPayload, dpopRecordPayload, loginRecordPayload:
            var data = plaintext.copyToData()
            var bytes = [UInt8](data)
            // The copies hold the refresh token and the id token: zeroed once read.
            defer {
                data.resetBytes(in: 0..<data.count)
                JSONWriter.zero(&bytes)
            }
            guard case .object(let record)? = try? StrictJSONParser.parse(bytes),
                case .string(let refreshToken)? = record["refresh_token"], !refreshToken.isEmpty,
                case .object(let context)? = record["context"],
                // A client, a DPoP key or a login part that is there but does not load is no record.
                case .some(let client) = UntrustedJSON.optional(record["client"], ClientRegistration.init(sealed:)),
                case .some(let dpopKey) = UntrustedJSON.optional(record["dpop_key"], Self.dpopKey),
                case .some(let login) = UntrustedJSON.optional(record["login"], Self.login(from:))
            else { return nil }
            // The payload says whether a client is sealed: a box that disagrees is not what its header says. Likewise
            // the DPoP key: present exactly in a v3 record (and maybe in a v4). The login part: exactly in a v4
            // record, which may hold a client and a DPoP key or neither.
            guard (login != nil) == (payload == loginRecordPayload) else { return nil }
            if login == nil {
                guard (dpopKey != nil) == (payload == dpopRecordPayload) else { return nil }
                if payload != dpopRecordPayload, (client != nil) != (payload == clientRecordPayload) { return nil }
            }
            // The id token only informs (``Auth/idToken``, the end-session hint): it is read as a JWT where it is
            // used, so one that no longer reads as one (a stricter parser in a later version) is never the login's
            // id token and never sent, and it never stops the login from opening.
            return RefreshToken(
                token: refreshToken,
                userId: userId,
                context: context,
                client: client,
                dpopKey: dpopKey,
                loginContext: login?.context,
                idToken: login?.idToken
            )
        default:
            return nil
        }
    }
}
