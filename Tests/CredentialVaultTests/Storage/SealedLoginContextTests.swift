import Foundation
import Testing
import VaultCrypto

@testable import CredentialVault

/// The login's id token and ``LoginContext`` are sealed with the refresh token (record version 4): in the same box,
/// named by the envelope's payload, which is associated data; records of versions 1 to 3 still open; never shown.
@Suite("the login's id token and context sealed with the refresh token")
struct SealedLoginContextTests {
    /// An unsigned id token shape (the record keeps what the login validated; only its form is checked on reading).
    static let idToken =
        Base64URL.encode(Data(#"{"alg":"EdDSA","typ":"JWT"}"#.utf8)) + "."
        + Base64URL.encode(Data(#"{"sub":"alice","iss":"https://issuer.example","acr":"silver"}"#.utf8)) + ".c2ln"

    static let context = LoginContext(
        acr: "silver",
        amr: ["pwd", "otp"],
        authTime: Date(timeIntervalSince1970: 1_800_000_000),
        requestedACRValues: ["gold"]
    )

    /// `token` with the id token and ``context`` sealed beside it.
    static func withLogin(_ token: RefreshToken) -> RefreshToken {
        token.replacingIDToken(idToken, context: context)
    }

    @Test("a token with a login context (with or without a client and a DPoP key) seals as record version 4 and opens")
    func roundTrip() throws {
        let key = DPoPKey()
        let cases: [(ClientRegistration?, DPoPKey?)] = [
            (nil, nil), (SealedClientTests.registration(), nil), (nil, key),
        ]
        for (client, dpop) in cases {
            let token = Self.withLogin(
                RefreshToken(token: "rt-1", userId: "alice", context: ["scope": "x"], client: client, dpopKey: dpop)
            )
            let (envelope, dataKey) = try SealedClientTests.sealed(token)
            #expect(envelope.payload == SealedRecord.loginRecordPayload)
            let file = envelope.encoded()
            #expect(!String(decoding: file, as: UTF8.self).contains(Self.idToken), "the id token is sealed only")
            let opened = try Envelope.decode(file, path: "alice.envelope").openToken(dataKey: dataKey)
            #expect(opened == token)
            #expect(opened.idToken == Self.idToken && opened.loginContext == Self.context)
            #expect(opened.client == client && opened.dpopKey == dpop)
            #expect(opened.loginContext?.acrMet == false, "silver is not among the gold asked for")
            // The payload is associated data: the same box named as an earlier record does not open.
            var renamed = envelope
            renamed.payload = SealedRecord.dpopRecordPayload
            #expect(throws: CryptoError.self) { try renamed.openToken(dataKey: dataKey) }
        }
    }

    /// The previous version's writer is this one for a token without a login context: it seals record version 1, 2
    /// or 3 exactly as before the login context existed (`SealedClientTests`, `SealedDPoPKeyTests` pin them).
    @Test("records of versions 1 to 3 (written without a login context) still open, with no login context")
    func earlierVersionsOpen() throws {
        let tokens = [
            RefreshToken(token: "rt-v1", userId: "alice"),
            RefreshToken(token: "rt-v2", userId: "alice", client: SealedClientTests.registration()),
            RefreshToken(token: "rt-v3", userId: "alice", dpopKey: DPoPKey()),
        ]
        let payloads = [nil, SealedRecord.clientRecordPayload, SealedRecord.dpopRecordPayload]
        for (token, payload) in zip(tokens, payloads) {
            let (envelope, dataKey) = try SealedClientTests.sealed(token)
            #expect(envelope.payload == payload)
            let opened = try Envelope.decode(envelope.encoded(), path: "alice.envelope").openToken(dataKey: dataKey)
            #expect(opened == token)
            #expect(opened.loginContext == nil && opened.idToken == nil)
        }
    }

    @Test("a login part that disagrees with its payload is refused; an id token that is no JWT opens as sealed")
    func payloadMustMatchRecord() {
        let login = #""login":{"acr":"a","amr":[],"acr_values":[],"id_token":"\#(Self.idToken)"}"#
        let withLogin = Data(#"{"refresh_token":"rt","context":{},\#(login)}"#.utf8)
        let without = Data(#"{"refresh_token":"rt","context":{}}"#.utf8)
        let broken = Data(
            #"{"refresh_token":"rt","context":{},"login":{"amr":[],"acr_values":[],"id_token":"x"}}"#.utf8
        )
        let v4 = SealedRecord.loginRecordPayload
        let opened = SealedRecord.token(from: SecureBytes(withLogin), payload: v4, userId: "a")
        #expect(opened?.loginContext?.acr == "a" && opened?.idToken == Self.idToken)
        #expect(SealedRecord.token(from: SecureBytes(without), payload: v4, userId: "a") == nil)
        let kept = SealedRecord.token(from: SecureBytes(broken), payload: v4, userId: "a")
        // Read as a JWT where it is used (Auth.idToken, the end-session hint: EndSessionTests), not here.
        #expect(kept?.token == "rt" && kept?.idToken == "x")
        for earlier in SealedRecord.payloads.subtracting([v4]) {
            #expect(SealedRecord.token(from: SecureBytes(withLogin), payload: earlier, userId: "a") == nil)
        }
    }

    @Test("descriptions and dumps of a token with a login context never show the id token")
    func noIDTokenShown() {
        let token = Self.withLogin(RefreshToken(token: "rt-MARKER-77d2", userId: "alice"))
        var dumped = ""
        dump(token, to: &dumped)
        let shown = [token.description, token.debugDescription, dumped].joined(separator: "\n")
        #expect(shown.contains("login context: kept"))
        #expect(!shown.contains(Self.idToken) && !shown.contains("rt-MARKER-77d2"))
        #expect(!shown.contains(String(Self.idToken.split(separator: ".")[1])))
    }

    @Test("acrMet: true without acr_values, and when the acr is one of them; false otherwise, or without an acr")
    func acrMet() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(LoginContext(acr: nil, authTime: now).acrMet)
        #expect(LoginContext(acr: "gold", authTime: now, requestedACRValues: ["silver", "gold"]).acrMet)
        #expect(!LoginContext(acr: "bronze", authTime: now, requestedACRValues: ["silver", "gold"]).acrMet)
        #expect(!LoginContext(acr: nil, authTime: now, requestedACRValues: ["gold"]).acrMet)
    }
}
