import Foundation
import Testing
import VaultCrypto

@testable import CredentialVault

/// The envelope and the record sealed in it are written by ``JSONWriter`` and read by the strict parser; the versions
/// before wrote them with `JSONEncoder` (which writes `/` as `\/`) and read them with `JSONDecoder`. Files and records
/// of either kind read the same.
@Suite("the envelope's JSON and its sealed record: what JSONEncoder wrote reads the same, nothing else does")
struct EnvelopeJSONTests {
    static let registration = ClientRegistration(
        clientId: "registered-1",
        method: .privateKeyJWT,
        registrationClientURI: URL(string: "https://id.example/register/registered-1"),
        metadata: ["client_name": "credential-vault", "redirect_uris": ["http://127.0.0.1:4000/callback"]],
        clientSecret: nil,
        registrationAccessToken: "registration-token",
        keys: [
            ClientRegistration.Key(
                pem: "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----",
                kid: "k1",
                alg: "ES384"
            )
        ]
    )

    /// A token of every part a record holds: context (a fraction, a whole number, a URL), a client, a login.
    static let token = RefreshToken(
        token: "rt/1+x",
        userId: "alice",
        context: ["patient": "p/1", "expires_in": 3600, "ratio": 0.25, "fhirUser": "https://fhir.example/Patient/1"],
        client: registration,
        dpopKey: nil,
        loginContext: LoginContext(
            acr: "urn:mace:incommon:iap:silver",
            amr: ["pwd", "otp"],
            authTime: Date(timeIntervalSince1970: 1_800_000_123),
            requestedACRValues: ["urn:mace:incommon:iap:silver"]
        ),
        idToken: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln"
    )

    /// ``token`` sealed in an envelope bound to an issuer, a client and a key service (``SealedClientTests``).
    static func sealed(_ token: RefreshToken) throws -> (Envelope, SecureBytes) {
        try SealedClientTests.sealed(
            token,
            binding: EnvelopeBinding(
                issuer: URL(string: "https://id.example/realms/a")!,
                clientId: "app",
                keyServiceURL: URL(string: "https://keys.example/v1")!
            )
        )
    }

    /// What `JSONEncoder` wrote for `value` (the synthesized `Codable` of the earlier versions had the same names and
    /// kinds): slashes escaped, sorted keys, pretty-printed for an envelope.
    static func earlierEncoding(_ value: JSONValue, pretty: Bool) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        return try encoder.encode(value)
    }

    @Test("an envelope JSONEncoder wrote decodes to the same envelope, which opens the same token")
    func earlierEnvelope() throws {
        let (envelope, dataKey) = try Self.sealed(Self.token)
        let earlier = try Self.earlierEncoding(envelope.json, pretty: true)
        #expect(String(decoding: earlier, as: UTF8.self).contains(#"https:\/\/id.example"#))
        let decoded = try Envelope.decode(earlier, path: "earlier.envelope")
        #expect(decoded.encoded() == envelope.encoded())
        #expect(try decoded.openToken(dataKey: dataKey) == Self.token)
    }

    @Test("a record JSONEncoder wrote opens as the same token, and this version's record of it reads back the same")
    func earlierRecord() throws {
        let (envelope, dataKey) = try Self.sealed(Self.token)
        #expect(envelope.payload == SealedRecord.loginRecordPayload)
        let written = try envelope.open(dataKey: dataKey)
        let record: JSONValue = try StrictJSONParser.parse(Array(written.copyToData()))
        let earlier = try Self.earlierEncoding(record, pretty: false)
        #expect(String(decoding: earlier, as: UTF8.self).contains(#"rt\/1+x"#))
        let opened = SealedRecord.token(
            from: SecureBytes(earlier),
            payload: SealedRecord.loginRecordPayload,
            userId: "alice"
        )
        #expect(opened == Self.token)
        #expect(opened?.loginContext?.authTime == Date(timeIntervalSince1970: 1_800_000_123))
        #expect(opened?.client?.keyIds == ["k1"])
    }

    @Test(
        "an envelope with a number past 2^53, a name twice or a field of the wrong kind is damaged; a new format says so"
    )
    func refusals() throws {
        let (envelope, _) = try Self.sealed(Self.token)
        guard case .object(var members) = envelope.json else { throw CancellationError() }
        func decoded(_ members: [String: JSONValue]) -> VaultError? {
            do {
                _ = try Envelope.decode(Data(JSONWriter.bytes(of: .object(members))), path: "e")
                return nil
            } catch { return error }
        }
        #expect(decoded(members) == nil)
        var large = members
        large["createdAt"] = .number(9_007_199_254_740_994)
        #expect(decoded(large)?.kind == .damagedRecord)
        var fraction = members
        fraction["updatedAt"] = 1.5
        #expect(decoded(fraction)?.kind == .damagedRecord)
        var wrongKind = members
        wrongKind["passwordWrap"] = "box"
        #expect(decoded(wrongKind)?.kind == .damagedRecord)
        var nullable = members
        nullable["deviceWrap"] = .null
        nullable["payload"] = .null
        #expect(decoded(nullable) == nil)
        let text = String(decoding: envelope.encoded(), as: UTF8.self)
        let twice = text.replacingOccurrences(of: #""keyId" : "#, with: #""keyId" : "other", "keyId" : "#)
        #expect(twice != text)
        #expect(throws: VaultError.self) { try Envelope.decode(Data(twice.utf8), path: "e") }
        members["format"] = "credential-vault/v9"
        members["userId"] = 7
        #expect(decoded(members)?.kind == .unsupportedFormat)
    }
}
