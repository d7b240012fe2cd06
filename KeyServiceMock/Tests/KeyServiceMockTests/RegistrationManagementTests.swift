import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("dynamic client registration: the registration answer, RFC 7592 management, revocation and introspection")
struct RegistrationManagementTests {
    @Test("a registration answers 201 with a random id, a 32-byte secret for client_secret_*, a token and its URI")
    func registrationAnswer() async throws {
        try await RegistrationClient.withServer { client in
            let jwks = try client.jwks(["ec-1"])
            let answer = try await client.register([
                "redirect_uris": [RegistrationClient.redirectURI], "client_name": "Echo", "scope": "openid",
                "jwks": jwks, "software_id": "ignored",
            ])
            #expect(answer.status == 201)
            #expect(answer.header("Cache-Control") == "no-store")
            let json = answer.json
            let clientId = try #require(json.string("client_id"))
            #expect(json.string("token_endpoint_auth_method") == "client_secret_basic", "RFC 7591 section 2's default")
            #expect(json.strings("grant_types") == ["authorization_code"])
            #expect(json.strings("response_types") == ["code"])
            #expect(json.strings("redirect_uris") == [RegistrationClient.redirectURI])
            #expect(json.string("client_name") == "Echo" && json.string("scope") == "openid")
            #expect(json.object("jwks")?.objects("keys").first?.string("kid") == "ec-1")
            #expect(json.int("client_secret_expires_at") == 0)
            #expect(json.int("client_id_issued_at") == Int(client.clock.now.timeIntervalSince1970))
            #expect(try Base64URLLength.bytes(of: try #require(json.string("client_secret"))) == 32)
            #expect(json.string("registration_access_token")?.isEmpty == false)
            #expect(
                json.string("registration_client_uri")
                    == client.server.registrationEndpoint.absoluteString + "/" + clientId
            )
            #expect(!json.has("software_id"))

            let other = try await client.registered("none")
            #expect(other.clientId != clientId)
            #expect(other.secret == nil)
            #expect(client.server.registrationRequests == 2)
            let kept = try #require(client.server.registeredClient(clientId))
            #expect(kept.tokenEndpointAuthMethod == "client_secret_basic" && kept.keyIds == ["ec-1"])
        }
    }

    @Test("RFC 7592: read with the registration access token only; a PUT rotates the keys; a DELETE ends the client")
    func management() async throws {
        try await RegistrationClient.withServer { client in
            let registered = try await client.registered("private_key_jwt", ["jwks": try client.jwks(["ec-1"])])
            let otherClient = try await client.registered("none")
            for token in [nil, "wrong", otherClient.registrationAccessToken] {
                let refused = try await client.manage("GET", registered, token: token)
                #expect(refused.status == 401)
                #expect(refused.string("error") == "invalid_token")
                #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            }
            let read = try await client.manage("GET", registered, token: registered.registrationAccessToken)
            #expect(read.status == 200)
            #expect(read.string("client_id") == registered.clientId)
            #expect(read.string("registration_access_token") == registered.registrationAccessToken)
            #expect(read.json.object("jwks")?.objects("keys").map { $0.string("kid") } == ["ec-1"])

            let tokens = try await client.exchange(
                registered,
                .assertion(try await client.assertion(registered.clientId, kid: "ec-1"))
            )
            var refreshToken = try #require(tokens.string("refresh_token"))
            #expect(
                try await client.refresh(refreshToken, .assertion(try await client.assertion(registered.clientId)))
                    .status == 401,
                "rsa-1 is not registered yet"
            )

            // Rotation: publish the new key beside the old one, then the new one alone.
            var metadata: [String: Any] = [
                "client_id": registered.clientId, "redirect_uris": [registered.redirectURI],
                "token_endpoint_auth_method": "private_key_jwt",
                "grant_types": ["authorization_code", "refresh_token"],
                "jwks": try client.jwks(["ec-1", "rsa-1"]),
            ]
            let both = try await client.manage(
                "PUT",
                registered,
                token: registered.registrationAccessToken,
                body: metadata
            )
            #expect(both.status == 200, "\(both.string("error_description") ?? "")")
            #expect(client.server.registeredClient(registered.clientId)?.keyIds == ["ec-1", "rsa-1"])
            for kid in ["ec-1", "rsa-1"] {
                let refreshed = try await client.refresh(
                    refreshToken,
                    .assertion(try await client.assertion(registered.clientId, kid: kid))
                )
                #expect(refreshed.status == 200, "\(kid): \(refreshed.string("error_description") ?? "")")
                refreshToken = try #require(refreshed.string("refresh_token"))
            }
            metadata["jwks"] = try client.jwks(["rsa-1"])
            let rotated = try await client.manage(
                "PUT",
                registered,
                token: registered.registrationAccessToken,
                body: metadata
            )
            #expect(rotated.status == 200)
            #expect(rotated.json.object("jwks")?.objects("keys").map { $0.string("kid") } == ["rsa-1"])
            #expect(client.server.registeredClient(registered.clientId)?.keyIds == ["rsa-1"])
            let old = try await client.refresh(
                refreshToken,
                .assertion(try await client.assertion(registered.clientId, kid: "ec-1"))
            )
            #expect(old.status == 401 && old.string("error") == "invalid_client", "the removed key is refused")
            let new = try await client.refresh(
                refreshToken,
                .assertion(try await client.assertion(registered.clientId, kid: "rsa-1"))
            )
            #expect(new.status == 200)
            refreshToken = try #require(new.string("refresh_token"))

            // An update must name the client, and cannot change its method.
            var noId = metadata
            noId["client_id"] = nil
            #expect(
                try await client.manage("PUT", registered, token: registered.registrationAccessToken, body: noId)
                    .string("error") == "invalid_client_metadata"
            )
            var otherMethod = metadata
            otherMethod["token_endpoint_auth_method"] = "none"
            let changed = try await client.manage(
                "PUT",
                registered,
                token: registered.registrationAccessToken,
                body: otherMethod
            )
            #expect(changed.status == 400 && changed.string("error") == "invalid_client_metadata")
            #expect(
                try await client.manage("PUT", registered, token: "wrong", body: metadata).status == 401
            )

            // DELETE: 204, then the client is unknown everywhere and its refresh token is refused.
            #expect(try await client.manage("DELETE", registered, token: "wrong").status == 401)
            let deleted = try await client.manage("DELETE", registered, token: registered.registrationAccessToken)
            #expect(deleted.status == 204)
            #expect(client.server.registeredClient(registered.clientId) == nil)
            #expect(try await client.manage("GET", registered, token: registered.registrationAccessToken).status == 401)
            let afterDelete = try await client.refresh(
                refreshToken,
                .assertion(try await client.assertion(registered.clientId, kid: "rsa-1"))
            )
            #expect(afterDelete.status == 401 && afterDelete.string("error") == "invalid_client")
            var authorize = client.oidc
            authorize.clientId = registered.clientId
            #expect(try await authorize.authorize(["aud": client.server.fhirBase.absoluteString]).status == 400)
            #expect(
                try await client.manage("GET", otherClient, token: otherClient.registrationAccessToken).status == 200
            )
        }
    }

    @Test("DELETE of a public client ends its sessions: its refresh token and access token stop working")
    func deleteRevokesSessions() async throws {
        try await RegistrationClient.withServer { client in
            let registered = try await client.registered("none")
            let tokens = try await client.exchange(registered, .clientId(registered.clientId))
            let refreshToken = try #require(tokens.string("refresh_token"))
            let accessToken = try #require(tokens.string("access_token"))
            let smart = SMARTClient(server: client.server, http: client.http)
            #expect(
                try await smart.fhir("Patient/p1", token: accessToken).status == 403,
                "known, but scope has no Patient"
            )
            #expect(
                try await client.manage("DELETE", registered, token: registered.registrationAccessToken).status == 204
            )
            #expect(try await smart.fhir("Patient/p1", token: accessToken).status == 401)
            let refused = try await client.refresh(refreshToken, .clientId(registered.clientId))
            #expect(refused.string("error") == "invalid_client")
        }
    }

    @Test("a replayed assertion jti is refused; revocation and introspection take assertions for their own aud")
    func replayRevocationIntrospection() async throws {
        try await RegistrationClient.withServer { client in
            let registered = try await client.registered("private_key_jwt")
            let tokens = try await client.exchange(
                registered,
                .assertion(try await client.assertion(registered.clientId))
            )
            let refreshToken = try #require(tokens.string("refresh_token"))
            let accessToken = try #require(tokens.string("access_token"))
            let assertion = try await client.assertion(registered.clientId)
            let first = try await client.refresh(refreshToken, .assertion(assertion))
            #expect(first.status == 200)
            let replay = try await client.refresh(try #require(first.string("refresh_token")), .assertion(assertion))
            #expect(replay.status == 401)
            #expect(replay.string("error_description")?.contains("jti was used before") == true)

            let introspectAud = client.endpoint("token/introspect")
            let active = try await client.post(
                "token/introspect",
                ["token": accessToken],
                .assertion(try await client.assertion(registered.clientId, aud: introspectAud))
            )
            #expect(active.status == 200 && active.json.bool("active") == true)
            let wrongAud = try await client.post(
                "token/introspect",
                ["token": accessToken],
                .assertion(try await client.assertion(registered.clientId, aud: client.endpoint("revoke")))
            )
            #expect(wrongAud.status == 401)
            #expect(
                try await client.post("token/introspect", ["token": accessToken], .clientId(registered.clientId)).status
                    == 401
            )

            #expect(
                try await client.post("revoke", ["token": accessToken], .clientId(registered.clientId)).status == 401
            )
            let revoked = try await client.post(
                "revoke",
                ["token": accessToken],
                .assertion(try await client.assertion(registered.clientId, aud: client.endpoint("revoke")))
            )
            #expect(revoked.status == 200)
            let inactive = try await client.post(
                "token/introspect",
                ["token": accessToken],
                .assertion(try await client.assertion(registered.clientId))
            )
            #expect(inactive.json.bool("active") == false)
        }
    }

    @Test("a client_secret_basic client revokes its refresh token with its secret only")
    func secretRevocation() async throws {
        try await RegistrationClient.withServer(smart: false) { client in
            let registered = try await client.registered("client_secret_basic")
            let secret = try #require(registered.secret)
            let tokens = try await client.exchange(registered, .basic(registered.clientId, secret))
            let refreshToken = try #require(tokens.string("refresh_token"))
            for wrong in [ClientCredential.clientId(registered.clientId), .basic(registered.clientId, "x" + secret)] {
                let refused = try await client.post("revoke", ["token": refreshToken], wrong)
                #expect(refused.status == 401 && refused.string("error") == "invalid_client")
            }
            #expect(try await client.refresh(refreshToken, .basic(registered.clientId, secret)).status == 200)
            let next = try await client.exchange(registered, .basic(registered.clientId, secret))
            let nextRefresh = try #require(next.string("refresh_token"))
            #expect(
                try await client.post("revoke", ["token": nextRefresh], .basic(registered.clientId, secret)).status
                    == 200
            )
            #expect(
                try await client.refresh(nextRefresh, .basic(registered.clientId, secret)).string("error")
                    == "invalid_grant"
            )
        }
    }

    @Test("client_credentials: taken for a private_key_jwt client that registered it, refused for one that did not")
    func clientCredentials() async throws {
        try await RegistrationClient.withServer { client in
            let system = try await client.registered(
                "private_key_jwt",
                ["grant_types": ["client_credentials"], "redirect_uris": [String]()]
            )
            let form = ["grant_type": "client_credentials", "scope": "system/Patient.rs"]
            let answer = try await client.post("token", form, .assertion(try await client.assertion(system.clientId)))
            #expect(answer.status == 200, "\(answer.string("error_description") ?? "")")
            #expect(answer.string("scope") == "system/Patient.rs" && !answer.json.has("refresh_token"))
            let token = try #require(answer.string("access_token"))
            let smart = SMARTClient(server: client.server, http: client.http)
            #expect(try await smart.fhir("Patient/p2", token: token).status == 200)
            var authorize = client.oidc
            authorize.clientId = system.clientId
            #expect(try await authorize.authorize(["aud": client.server.fhirBase.absoluteString]).status == 400)

            let codeClient = try await client.registered("private_key_jwt")
            let refused = try await client.post(
                "token",
                form,
                .assertion(try await client.assertion(codeClient.clientId))
            )
            #expect(refused.status == 400 && refused.string("error") == "unauthorized_client")
        }
    }
}

/// The length in bytes of base64url text without padding.
enum Base64URLLength {
    static func bytes(of text: String) throws -> Int {
        try Base64URL.decode(text).count
    }
}
