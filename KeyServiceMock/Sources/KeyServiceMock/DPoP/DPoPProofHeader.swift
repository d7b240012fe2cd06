/// A DPoP proof's JOSE header (RFC 9449 section 4.2): `typ`, `alg` and the public `jwk`.
struct DPoPProofHeader: Decodable {
    struct Key: Decodable {
        let kty: String?
        let crv: String?
        let x: String?
        let y: String?
        /// A private member: a proof that carries it is refused (RFC 9449 section 4.2: no private key).
        let d: String?
    }

    let typ: String?
    let alg: String?
    let jwk: Key?
}
