import Foundation
import Testing
import VaultCrypto

/// Protocol 2's calls (issue 27), with the client's side of them as the protocol's spec derives it, over
/// VaultCrypto's OPRF: what a client library does, written out plainly for the tests.
///
/// The OPRF input stands in for the first half of Argon2id(password, salt): the password's UTF-8 bytes, as the
/// server can tell no difference (it sees only blinded elements). The same helper as KeyServiceMockTests' (a test
/// target cannot share it without a support target that imports VaultCrypto).
struct KeyServiceV2Calls: Sendable {
    let base: URL
    let http: HTTPClient

    /// A registered key: what `createkey` answered, and the OPRF output of the password it was made for.
    struct Registered: Sendable {
        let keyId: String
        let key: String
        let longSecret: String
        let output: SecureBytes
        let authKey: SecureBytes
    }

    /// An evaluation: the answer, and (for a 200) the client's OPRF output and the nonce it must prove.
    struct Evaluation: Sendable {
        let answer: HTTPAnswer
        let output: SecureBytes?
        let nonce: String?
    }

    func post(_ call: String, _ fields: [String: String]) async throws -> HTTPAnswer {
        try await http.post(base.appendingPathComponent(call), json: fields)
    }

    func createKey(blinded: Data) async throws -> HTTPAnswer {
        try await post("createkey", ["blinded": Base64URL.encode(blinded)])
    }

    func enroll(_ keyId: String, longSecret: String, authKey: Data) async throws -> HTTPAnswer {
        try await post("enroll", ["keyid": keyId, "longsecret": longSecret, "authkey": Base64URL.encode(authKey)])
    }

    func evaluate(_ keyId: String, blinded: Data) async throws -> HTTPAnswer {
        try await post("evaluate", ["keyid": keyId, "blinded": Base64URL.encode(blinded)])
    }

    func confirm(_ keyId: String, nonce: String, proof: Data) async throws -> HTTPAnswer {
        try await post("confirm", ["keyid": keyId, "nonce": nonce, "proof": Base64URL.encode(proof)])
    }

    func key(_ keyId: String, longSecret: String) async throws -> HTTPAnswer {
        try await post("key", ["keyid": keyId, "longsecret": longSecret])
    }

    /// Registers `password` as a client does: createkey with a blinded input, finalize, enroll the auth key.
    func register(password: String) async throws -> Registered {
        let input = Self.input(password)
        let blinding = try OPRF.blind(input)
        let created = try await createKey(blinded: blinding.blindedElement)
        try #require(created.status == 200, "createkey answered \(created.status)")
        let keyId = try #require(created.string("keyid"))
        let longSecret = try #require(created.string("longsecret"))
        let evaluated = try Base64URL.decode(try #require(created.string("evaluated")))
        let output = try OPRF.finalize(input, blinding: blinding, evaluatedElement: evaluated)
        let authKey = try Self.authKey(output: output, keyId: keyId)
        let enrolled = try await enroll(keyId, longSecret: longSecret, authKey: authKey.copyToData())
        try #require(enrolled.status == 200, "enroll answered \(enrolled.status)")
        return Registered(
            keyId: keyId,
            key: try #require(created.string("key")),
            longSecret: longSecret,
            output: output,
            authKey: authKey
        )
    }

    /// A login's first step with `password`: evaluate, then finalize what came back.
    func evaluate(_ keyId: String, password: String) async throws -> Evaluation {
        let input = Self.input(password)
        let blinding = try OPRF.blind(input)
        let answer = try await evaluate(keyId, blinded: blinding.blindedElement)
        guard answer.status == 200 else { return Evaluation(answer: answer, output: nil, nonce: nil) }
        let evaluated = try Base64URL.decode(try #require(answer.string("evaluated")))
        return Evaluation(
            answer: answer,
            output: try OPRF.finalize(input, blinding: blinding, evaluatedElement: evaluated),
            nonce: answer.string("nonce")
        )
    }

    /// A login's second step: the proof the evaluation's output makes for its nonce.
    func confirm(_ keyId: String, evaluation: Evaluation) async throws -> HTTPAnswer {
        let output = try #require(evaluation.output)
        let nonce = try #require(evaluation.nonce)
        let proof = try Self.proof(authKey: try Self.authKey(output: output, keyId: keyId), keyId: keyId, nonce: nonce)
        return try await confirm(keyId, nonce: nonce, proof: proof)
    }

    /// The OPRF input of `password` (see the type's note).
    static func input(_ password: String) -> SecureBytes {
        SecureBytes(password.utf8)
    }

    /// `authKey = BLAKE2b-256(key: y, "credential-vault/keyservice-v2/auth-key", UTF8(keyid))`.
    static func authKey(output: SecureBytes, keyId: String) throws -> SecureBytes {
        try BLAKE2b.keyedHash(key: output, domain: "credential-vault/keyservice-v2/auth-key", message: Data(keyId.utf8))
    }

    /// `proof = BLAKE2b-256(key: authKey, "credential-vault/keyservice-v2/confirm", UTF8(keyid) || 0x00 || nonce)`.
    static func proof(authKey: SecureBytes, keyId: String, nonce: String) throws -> Data {
        try BLAKE2b.keyedHash(
            key: authKey,
            domain: "credential-vault/keyservice-v2/confirm",
            message: Data(keyId.utf8) + [0] + (try Base64URL.decode(nonce))
        ).copyToData()
    }
}
