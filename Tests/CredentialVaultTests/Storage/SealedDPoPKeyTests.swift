import Foundation
import Testing
import VaultCrypto

@testable import CredentialVault

/// The DPoP key is sealed with the refresh token (record version 3): in the same box, named by the envelope's
/// payload, which is associated data; never in the envelope's clear JSON, never shown by a description.
@Suite("the DPoP key sealed with the refresh token")
struct SealedDPoPKeyTests {
    @Test("a token with a DPoP key (with or without a client) seals as record version 3 and opens with the same key")
    func roundTrip() throws {
        let key = DPoPKey()
        for client in [nil, SealedClientTests.registration()] {
            let token = RefreshToken(
                token: "rt-1",
                userId: "alice",
                context: ["scope": "x"],
                client: client,
                dpopKey: key
            )
            let (envelope, dataKey) = try SealedClientTests.sealed(token)
            #expect(envelope.payload == SealedRecord.dpopRecordPayload)
            let file = envelope.encoded()
            let text = String(decoding: file, as: UTF8.self)
            #expect(!text.contains(key.sealed) && !text.contains(key.publicJWK["x"]!))
            let opened = try Envelope.decode(file, path: "alice.envelope").openToken(dataKey: dataKey)
            #expect(opened == token && opened.dpopKey == key && opened.client == client)
            // The payload is associated data: the same box named as another record does not open.
            var renamed = envelope
            renamed.payload = client == nil ? SealedRecord.recordPayload : SealedRecord.clientRecordPayload
            #expect(throws: CryptoError.self) { try renamed.openToken(dataKey: dataKey) }
        }
    }

    @Test("a record whose dpop_key disagrees with its payload is not read as a refresh token")
    func payloadMustMatchRecord() throws {
        let withKey = Data(#"{"refresh_token":"rt","context":{},"dpop_key":"\#(DPoPKey().sealed)"}"#.utf8)
        let without = Data(#"{"refresh_token":"rt","context":{}}"#.utf8)
        let broken = Data(#"{"refresh_token":"rt","context":{},"dpop_key":"not-a-key"}"#.utf8)
        let v3 = SealedRecord.dpopRecordPayload
        #expect(SealedRecord.token(from: SecureBytes(withKey), payload: v3, userId: "a")?.dpopKey != nil)
        #expect(SealedRecord.token(from: SecureBytes(without), payload: v3, userId: "a") == nil)
        #expect(SealedRecord.token(from: SecureBytes(broken), payload: v3, userId: "a") == nil)
        #expect(SealedRecord.token(from: SecureBytes(withKey), payload: SealedRecord.recordPayload, userId: "a") == nil)
    }

    @Test("descriptions and dumps of a key and its token show the thumbprint, never the private key")
    func noKeyShown() {
        let key = DPoPKey()
        let token = RefreshToken(token: "rt-MARKER-5a1c", userId: "alice", dpopKey: key)
        var dumped = ""
        dump(key, to: &dumped)
        dump(token, to: &dumped)
        let shown = [key.description, key.debugDescription, token.description, dumped].joined(separator: "\n")
        #expect(shown.contains(key.thumbprint) || shown.contains("dpop"))
        #expect(!shown.contains(key.sealed) && !shown.contains("rt-MARKER-5a1c"))
    }
}
