import Foundation

/// A protocol 2 request body: a flat JSON object of strings, like protocol 1's; unknown fields are ignored.
struct KeyServiceV2Request: Decodable {
    let keyid: String?
    let blinded: String?
    let longsecret: String?
    let authkey: String?
    let nonce: String?
    let proof: String?
    let secret: String?

    /// The fields of a body the fast reader took (``FlatJSON/plainStrings(in:)``).
    init(fields: [String: String]) {
        keyid = fields["keyid"]
        blinded = fields["blinded"]
        longsecret = fields["longsecret"]
        authkey = fields["authkey"]
        nonce = fields["nonce"]
        proof = fields["proof"]
        secret = fields["secret"]
    }

    /// Every field given, for the empty-string check.
    var values: [String?] { [keyid, blinded, longsecret, authkey, nonce, proof, secret] }
}
