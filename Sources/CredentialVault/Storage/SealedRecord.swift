import Foundation
import VaultCrypto

/// What an envelope's token box holds: the refresh token alone (the plaintext is its UTF-8, as every envelope
/// before session contexts), or the token and its session context as one JSON record, and with them the client this
/// library registered (record version 2, which a version that cannot keep the registration does not open).
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
    /// Every payload this version reads.
    static let payloads: Set<String> = [recordPayload, clientRecordPayload, dpopRecordPayload]

    private struct Record: Codable {
        let refresh_token: String
        let context: [String: JSONValue]
        let client: ClientRegistration.Sealed?
        /// The DPoP private key (``DPoPKey``), base64url; only in ``dpopRecordPayload`` records.
        let dpop_key: String?
    }

    /// The plaintext to seal for `token`, and the payload to name in the envelope.
    static func plaintext(of token: RefreshToken) -> (plaintext: SecureBytes, payload: String?) {
        guard !token.context.isEmpty || token.client != nil || token.dpopKey != nil else {
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
            dpop_key: token.dpopKey?.sealed
        )
        let data = try! encoder.encode(record)
        let payload =
            token.dpopKey != nil ? dpopRecordPayload : client == nil ? recordPayload : clientRecordPayload
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
        case recordPayload, clientRecordPayload, dpopRecordPayload:
            guard let record = try? UntrustedJSON.decode(Record.self, from: plaintext.copyToData()),
                !record.refresh_token.isEmpty
            else { return nil }
            // The payload says whether a client is sealed: a box that disagrees is not what its header says.
            let client = record.client.flatMap(ClientRegistration.init(sealed:))
            // Likewise the DPoP key: present exactly in a v3 record, and a key that does not load is no record.
            let dpopKey = record.dpop_key.flatMap(DPoPKey.init(sealed:))
            guard (dpopKey != nil) == (payload == dpopRecordPayload), (dpopKey == nil) == (record.dpop_key == nil)
            else { return nil }
            if payload != dpopRecordPayload, (client != nil) != (payload == clientRecordPayload) { return nil }
            if record.client != nil, client == nil { return nil }
            return RefreshToken(
                token: record.refresh_token,
                userId: userId,
                context: record.context,
                client: client,
                dpopKey: dpopKey
            )
        default:
            return nil
        }
    }
}
