import Foundation
import KeyServiceMock
import Testing

@testable import CredentialVault

/// The session context: what the token endpoint sends beside the tokens, and what the app adds, sealed in the same
/// envelope as the refresh token, so a password login after a restart comes back with it.
@Suite("the session context is sealed with the refresh token")
struct SessionContextTests {
    @Test("a token answer's other fields are kept, never the tokens or lifetimes")
    func fieldsKept() throws {
        let body = Data(
            #"""
            {"access_token":"at-secret","refresh_token":"rt-secret","id_token":"a.b.c","expires_in":300,
             "refresh_expires_in":1800,"token_type":"Bearer","scope":"launch/patient patient/*.rs","patient":"p7",
             "fhirContext":[{"reference":"Encounter/e1"}],"x-site":{"unit":"ward 7"},"device_secret":"ds-secret",
             "credential_vault_smart":{"fhir_user":"Practitioner/forged"}}
            """#.utf8
        )
        let response = try #require(TokenEndpoint.tokenResponse(from: body))
        #expect(
            response.context == [
                "token_type": "Bearer", "scope": "launch/patient patient/*.rs", "patient": "p7",
                "fhirContext": [["reference": "Encounter/e1"]], "x-site": ["unit": "ward 7"],
            ]
        )
    }

    @Test("a number with no JSON form (NaN, infinity) is sealed as null, never a crash")
    func nonFinite() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            try await fixture.vault.auth.addToSessionContext([
                "credential_vault_x": .number(.nan), "credential_vault_y": [.number(.infinity), 1],
            ])
            let restarted = try fixture.restarted()
            _ = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            let context = await restarted.auth.sessionContext
            #expect(context["credential_vault_x"] == .null)
            #expect(context["credential_vault_y"] == [.null, 1])
        }
    }

    @Test("fields an answer names replace the stored ones; fields it omits stay")
    func merging() {
        let stored = RefreshToken(token: "t1", userId: "u", context: ["patient": "p1", "scope": "a b"])
        let updated = stored.replacingToken("t2").addingContext(["scope": "a"])
        #expect(updated.token == "t2")
        #expect(updated.context == ["patient": "p1", "scope": "a"])
    }

    @Test("after the OpenID Connect login, a password login in a new vault returns the same context")
    func survivesRestart() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            let launched = await fixture.vault.auth.sessionContext
            // KeyServiceMock answers with scope, token_type and session_state beside the tokens.
            #expect(launched["scope"]?.stringValue?.contains("offline_access") == true)
            #expect(launched["access_token"] == nil && launched["refresh_token"] == nil && launched["id_token"] == nil)

            let restarted = try fixture.restarted()
            _ = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            #expect(await restarted.auth.sessionContext == launched)
        }
    }

    @Test("a field the app adds is sealed at once, and a refresh that omits it keeps it")
    func addedFieldsSurviveRefresh() async throws {
        try await AuthFixture.with { fixture in
            try await fixture.register()
            try await fixture.vault.auth.addToSessionContext(["patient": "p3", "scope": "patient/Patient.rs"])
            // The issuer's refresh answer names scope (so it replaces the app's) but not patient (so it stays).
            _ = try await fixture.vault.auth.getAccessToken(forceRefresh: true)

            let restarted = try fixture.restarted()
            _ = try await restarted.auth.loginWithPassword(password: AuthFixture.password)
            let context = await restarted.auth.sessionContext
            #expect(context["patient"] == "p3")
            #expect(context["scope"]?.stringValue?.contains("offline_access") == true)
        }
    }

    @Test("the envelope's payload field is authenticated: removed, the envelope does not open; unknown, it is refused")
    func payloadAuthenticated() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let url = fixture.root.appending(path: "store").appending(path: StoreFile.envelope.name(userId: userId))
            let original = try Data(contentsOf: url)
            var json = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
            // A code-flow login keeps its id token and login context too: record version 4.
            #expect(json["payload"] as? String == SealedRecord.loginRecordPayload)

            json["payload"] = nil
            try JSONSerialization.data(withJSONObject: json).write(to: url)
            let removed = await #expect(throws: VaultError.self) {
                try await fixture.restarted().auth.loginWithPassword(password: AuthFixture.password)
            }
            #expect(removed?.kind == .envelopeDidNotOpen)

            json["payload"] = "credential-vault/record/v9"
            try JSONSerialization.data(withJSONObject: json).write(to: url)
            let unknown = await #expect(throws: VaultError.self) {
                try await fixture.restarted().auth.loginWithPassword(password: AuthFixture.password)
            }
            #expect(unknown?.kind == .unsupportedFormat)

            try original.write(to: url)
            _ = try await fixture.restarted().auth.loginWithPassword(password: AuthFixture.password)
        }
    }

    @Test("a token stored without a context is sealed as its text alone (no payload) and opens with an empty context")
    func withoutContext() async throws {
        try await AuthFixture.with { fixture in
            let storage = fixture.vault.userStorage
            try await storage.storeRefreshToken(
                RefreshToken(token: "opaque-refresh-token", userId: "plain"),
                withNewPassword: AuthFixture.password
            )
            let url = fixture.root.appending(path: "store").appending(path: StoreFile.envelope.name(userId: "plain"))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            #expect(json["payload"] == nil)
            let opened = try await storage.getStoredRefreshToken(userId: "plain", password: AuthFixture.password)
            #expect(opened.token == "opaque-refresh-token")
            #expect(opened.context.isEmpty)
        }
    }
}
