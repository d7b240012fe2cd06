import Foundation

/// A key-service request: a flat JSON object of strings, names in lower case as the protocol has them, in the order
/// of their names: the names and the order `JSONEncoder` with `.sortedKeys` wrote. Written directly (``JSONWriter``):
/// every login sends one, and right after Argon2id, with every cache cold, `JSONEncoder` took about 40 µs of it
/// (issue 23).
struct KeyServiceRequestBody {
    var keyid: String?
    var secret: String?
    var longsecret: String?
    var blinded: String?
    var authkey: String?
    var nonce: String?
    var proof: String?

    /// The JSON object (``JSONWriter``).
    var json: Data {
        let fields = [
            "authkey": authkey, "blinded": blinded, "keyid": keyid, "longsecret": longsecret, "nonce": nonce,
            "proof": proof, "secret": secret,
        ]
        var bytes = JSONWriter.bytes(of: .object(fields.compactMapValues { $0.map(JSONValue.string) }))
        // It holds the secret: the request body is the one copy kept.
        defer { JSONWriter.zero(&bytes) }
        return Data(bytes)
    }
}
