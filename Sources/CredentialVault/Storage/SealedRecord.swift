import Foundation
import VaultCrypto

/// What an envelope's token box holds: the refresh token alone (the plaintext is its UTF-8, as every envelope
/// before session contexts), or the token and its session context as one JSON record.
///
/// Which of the two the box holds is the envelope's `payload` field, which is part of the box's associated data:
/// a box is never read as the other kind.
enum SealedRecord {
    /// `payload` of a box holding ``Record`` JSON; nil is the token's UTF-8 alone.
    static let recordPayload = "credential-vault/record/v1"

    private struct Record: Codable {
        let refresh_token: String
        let context: [String: JSONValue]
    }

    /// The plaintext to seal for `token`, and the payload to name in the envelope.
    static func plaintext(of token: RefreshToken) -> (plaintext: SecureBytes, payload: String?) {
        guard !token.context.isEmpty else { return (SecureBytes(Data(token.token.utf8)), nil) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A number that is not finite has no JSON form: it is kept as null. Then every value encodes.
        let context = token.context.mapValues(finite)
        let data = try! encoder.encode(Record(refresh_token: token.token, context: context))
        return (SecureBytes(data), recordPayload)
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
        case recordPayload:
            guard let record = try? JSONDecoder().decode(Record.self, from: plaintext.copyToData()),
                !record.refresh_token.isEmpty
            else { return nil }
            return RefreshToken(token: record.refresh_token, userId: userId, context: record.context)
        default:
            return nil
        }
    }
}
