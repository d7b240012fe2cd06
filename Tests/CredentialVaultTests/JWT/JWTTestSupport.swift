import CredentialVault
import Foundation
import Testing
import VaultCrypto

/// Builds compact tokens from JSON text or raw bytes; the signature is never checked, so any
/// base64url text serves.
enum JWTFixture {
    static let signature = Base64URL.encode(Data("not a real signature".utf8))
    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    static func segment(_ json: String) -> String { Base64URL.encode(Data(json.utf8)) }
    static func segment(bytes: [UInt8]) -> String { Base64URL.encode(Data(bytes)) }

    /// `header.payload.signature` from JSON text.
    static func make(header: String = header, payload: String, signature: String = signature) -> String {
        "\(segment(header)).\(segment(payload)).\(signature)"
    }

    /// A token whose payload is `{"sub":"alice", <extra>}`.
    static func withClaims(_ extra: String) -> String {
        make(payload: extra.isEmpty ? #"{"sub":"alice"}"# : #"{"sub":"alice",\#(extra)}"#)
    }
}

/// The code `JWT(token:)` fails with, or `nil` when it decodes.
func jwtDecodeFailure(_ token: String) -> JWTError.Code? {
    do {
        _ = try JWT(token: token)
        return nil
    } catch {
        return error.code
    }
}

enum JWTVectors {
    struct JWTVector: Decodable {
        let source: String
        let token: String
        let headerJSON: String
        let payloadJSON: String
        let alg: String
        let typ: String?
        let iss: String
        let exp: Double
        let isRoot: Bool

        enum CodingKeys: String, CodingKey {
            case source, token, alg, typ, iss, exp
            case headerJSON = "header_json"
            case payloadJSON = "payload_json"
            case isRoot = "is_root"
        }
    }

    /// The JWT vectors of `Vectors/jwt.json`, by key; each names its RFC.
    static func jwt() throws -> [String: JWTVector] {
        let url = try #require(Bundle.module.url(forResource: "Vectors/jwt", withExtension: "json"))
        return try JSONDecoder().decode([String: JWTVector].self, from: Data(contentsOf: url))
    }
}
