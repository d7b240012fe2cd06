public import Foundation
public import VaultCrypto

/// Protocol 2's calls (issue 27), with the client's side of them as the protocol's spec derives it, over
/// VaultCrypto's OPRF: what a client library does, written out plainly for the key services' tests (KeyServiceTests
/// and KeyServiceMockTests, each over its own HTTP client). The auth key and the proof are derived here from the
/// spec's text, not with KeyServiceProof, so the tests check the server against the spec.
///
/// The OPRF input stands in for the first half of Argon2id(password, salt): the password's UTF-8 bytes, as the
/// server can tell no difference (it sees only blinded elements).
public struct KeyServiceV2Client<Answer: JSONAnswer>: Sendable {
    /// The v2 base (`.../keyservice/v2`).
    public let base: URL
    /// Posts a flat JSON object to a URL and reads the answer (the test target's own HTTP client).
    public let send: @Sendable (URL, [String: String]) async throws -> Answer

    /// Calls below `base`, each sent with `send`.
    public init(base: URL, send: @escaping @Sendable (URL, [String: String]) async throws -> Answer) {
        self.base = base
        self.send = send
    }

    /// A step that did not go as a client needs (a status, a missing field), in words.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, such as `enroll answered 409`.
        public let description: String
    }

    /// A registered key: what `createkey` answered, and the OPRF output of the password it was made for.
    public struct Registered: Sendable {
        /// The `keyid` `createkey` answered.
        public let keyId: String
        /// The server key, as `createkey` answered it.
        public let key: String
        /// The long secret, as `createkey` answered it; it opens the key without the password.
        public let longSecret: String
        /// The OPRF output of the password (`y`), which the auth key and every proof derive from.
        public let output: SecureBytes
        /// The auth key enrolled for the key (``authKey(output:keyId:)``).
        public let authKey: SecureBytes
    }

    /// An evaluation: the answer, and (for a 200) the client's OPRF output and the nonce it must prove.
    public struct Evaluation: Sendable {
        /// What `evaluate` answered, whatever its status.
        public let answer: Answer
        /// The OPRF output of the password; nil unless the status was 200.
        public let output: SecureBytes?
        /// The nonce the next `confirm` must prove, base64url as answered; nil unless the status was 200.
        public let nonce: String?
    }

    /// POSTs `fields` to `call` below ``base``; the answer whatever its status.
    public func post(_ call: String, _ fields: [String: String]) async throws -> Answer {
        try await send(base.appendingPathComponent(call), fields)
    }

    /// `createkey` with `{"blinded"}`, the element in base64url.
    public func createKey(blinded: Data) async throws -> Answer {
        try await post("createkey", ["blinded": Base64URL.encode(blinded)])
    }

    /// `enroll` with `{"keyid","longsecret","authkey"}`, the auth key in base64url.
    public func enroll(_ keyId: String, longSecret: String, authKey: Data) async throws -> Answer {
        try await post("enroll", ["keyid": keyId, "longsecret": longSecret, "authkey": Base64URL.encode(authKey)])
    }

    /// `evaluate` with `{"keyid","blinded"}`, the element in base64url.
    public func evaluate(_ keyId: String, blinded: Data) async throws -> Answer {
        try await post("evaluate", ["keyid": keyId, "blinded": Base64URL.encode(blinded)])
    }

    /// `confirm` with `{"keyid","nonce","proof"}`, the proof in base64url.
    public func confirm(_ keyId: String, nonce: String, proof: Data) async throws -> Answer {
        try await post("confirm", ["keyid": keyId, "nonce": nonce, "proof": Base64URL.encode(proof)])
    }

    /// `key` with `{"keyid","longsecret"}`, below the v2 base.
    public func key(_ keyId: String, longSecret: String) async throws -> Answer {
        try await post("key", ["keyid": keyId, "longsecret": longSecret])
    }

    /// Registers `password` as a client does: createkey with a blinded input, finalize, enroll the auth key.
    public func register(password: String) async throws -> Registered {
        let input = Self.input(password)
        let blinding = try OPRF.blind(input)
        let created = try await createKey(blinded: blinding.blindedElement)
        guard created.status == 200 else { throw Failure(description: "createkey answered \(created.status)") }
        let keyId = try Self.required(created.string("keyid"))
        let longSecret = try Self.required(created.string("longsecret"))
        let evaluated = try Base64URL.decode(try Self.required(created.string("evaluated")))
        let output = try OPRF.finalize(input, blinding: blinding, evaluatedElement: evaluated)
        let authKey = try Self.authKey(output: output, keyId: keyId)
        let enrolled = try await enroll(keyId, longSecret: longSecret, authKey: authKey.copyToData())
        guard enrolled.status == 200 else { throw Failure(description: "enroll answered \(enrolled.status)") }
        return Registered(
            keyId: keyId,
            key: try Self.required(created.string("key")),
            longSecret: longSecret,
            output: output,
            authKey: authKey
        )
    }

    /// A login's first step with `password`: evaluate, then finalize what came back.
    public func evaluate(_ keyId: String, password: String) async throws -> Evaluation {
        let input = Self.input(password)
        let blinding = try OPRF.blind(input)
        let answer = try await evaluate(keyId, blinded: blinding.blindedElement)
        guard answer.status == 200 else { return Evaluation(answer: answer, output: nil, nonce: nil) }
        let evaluated = try Base64URL.decode(try Self.required(answer.string("evaluated")))
        return Evaluation(
            answer: answer,
            output: try OPRF.finalize(input, blinding: blinding, evaluatedElement: evaluated),
            nonce: answer.string("nonce")
        )
    }

    /// A login's second step: the proof the evaluation's output makes for its nonce.
    public func confirm(_ keyId: String, evaluation: Evaluation) async throws -> Answer {
        let output = try Self.required(evaluation.output)
        let nonce = try Self.required(evaluation.nonce)
        let proof = try Self.proof(authKey: try Self.authKey(output: output, keyId: keyId), keyId: keyId, nonce: nonce)
        return try await confirm(keyId, nonce: nonce, proof: proof)
    }

    /// The OPRF input of `password` (see the type's note).
    public static func input(_ password: String) -> SecureBytes {
        SecureBytes(password.utf8)
    }

    /// `authKey = BLAKE2b-256(key: y, "credential-vault/keyservice-v2/auth-key", UTF8(keyid))`.
    public static func authKey(output: SecureBytes, keyId: String) throws -> SecureBytes {
        try BLAKE2b.keyedHash(key: output, domain: "credential-vault/keyservice-v2/auth-key", message: Data(keyId.utf8))
    }

    /// `proof = BLAKE2b-256(key: authKey, "credential-vault/keyservice-v2/confirm", UTF8(keyid) || 0x00 || nonce)`.
    public static func proof(authKey: SecureBytes, keyId: String, nonce: String) throws -> Data {
        try BLAKE2b.keyedHash(
            key: authKey,
            domain: "credential-vault/keyservice-v2/confirm",
            message: Data(keyId.utf8) + [0] + (try Base64URL.decode(nonce))
        ).copyToData()
    }

    /// `value`, or a ``Failure`` naming what is missing.
    private static func required<Value>(_ value: Value?, _ what: String = "a field of the answer") throws -> Value {
        guard let value else { throw Failure(description: "\(what) is missing") }
        return value
    }
}
