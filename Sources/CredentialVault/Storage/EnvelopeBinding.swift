public import Foundation

/// Where a stored refresh token belongs: the issuer that issued it, the client it was issued to and the
/// key service that holds its key. Sealed into the envelope's authenticated header, so a configuration
/// that names another issuer, client or key service is refused before anything is sent anywhere.
public struct EnvelopeBinding: Codable, Sendable, Hashable {
    /// The issuer URL, as configured.
    public let issuer: String
    /// The client id at the issuer.
    public let clientId: String
    /// The key service's base URL, as configured.
    public let keyService: String

    /// The binding of `issuer`, `clientId` and `keyServiceURL`.
    public init(issuer: URL, clientId: String, keyServiceURL: URL) {
        self.issuer = Self.normalized(issuer)
        self.clientId = clientId
        keyService = Self.normalized(keyServiceURL)
    }

    /// The same binding for the client `clientId` (one this library registered).
    func registered(clientId: String) -> EnvelopeBinding {
        EnvelopeBinding(issuer: issuer, clientId: clientId, keyService: keyService)
    }

    private init(issuer: String, clientId: String, keyService: String) {
        self.issuer = issuer
        self.clientId = clientId
        self.keyService = keyService
    }

    /// The binding as an envelope holds it (``Envelope/json``): `issuer`, `clientId`, `keyService`, the names its
    /// `Codable` form has.
    var sealed: JSONValue {
        ["issuer": .string(issuer), "clientId": .string(clientId), "keyService": .string(keyService)]
    }

    /// The binding ``sealed`` wrote; nil when `sealed` is not one.
    init?(sealed: JSONValue) {
        guard let members = sealed.objectValue, case .string(let issuer)? = members["issuer"],
            case .string(let clientId)? = members["clientId"], case .string(let keyService)? = members["keyService"]
        else { return nil }
        self.init(issuer: issuer, clientId: clientId, keyService: keyService)
    }

    /// The fields in which the `configured` binding differs from this stored one, in words (empty when they are the
    /// same). A configuration without a client id registers its client: any client id stored is its own.
    func differences(from configured: EnvelopeBinding) -> [String] {
        let other = configured
        var differences: [String] = []
        if issuer != other.issuer { differences.append("issuer \(issuer), not \(other.issuer)") }
        if !other.clientId.isEmpty, clientId != other.clientId {
            differences.append("client id \(clientId), not \(other.clientId)")
        }
        if keyService != other.keyService { differences.append("key service \(keyService), not \(other.keyService)") }
        return differences
    }

    /// One spelling per URL: a trailing slash does not make another issuer.
    private static func normalized(_ url: URL) -> String {
        let text = url.absoluteString
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
