import CredentialVault
import Foundation

// KeyServiceMock's issuer and its client `vault`; for your own server, its issuer and your client id.
let issuer = URL(string: ProcessInfo.processInfo.environment["ISSUER"] ?? "http://127.0.0.1:8080/auth/realms/demo")!
let vault = try Vault(
    configuration: VaultConfiguration(
        issuer: issuer,
        clientId: "vault",
        keyServiceURL: TIMLayout.keyServiceURL(issuer: issuer),  // {issuer}/keyservice/v1, as TIM deployments serve it
        storeDirectory: FileManager.default.temporaryDirectory.appending(path: "credential-vault-readme")
    )
)

// The first login: the authorization code flow with PKCE S256, state and nonce. The redirect comes back
// to a loopback listener on 127.0.0.1 (RFC 8252), or through auth.handleRedirect(url:) in apps.
let userId = try await vault.auth.performOpenIDConnectFlow { url in
    print("Open \(url) in a browser to log in.")
    // KeyServiceMock signs its user in without a page: following its redirect here finishes the login.
    let transport = DefaultHTTPTransport.make()
    if let answer = try? await transport.send(HTTPRequest(method: "GET", url: url)),
        let location = answer.headers["location"].flatMap({ URL(string: $0) })
    {
        _ = try? await transport.send(HTTPRequest(method: "GET", url: location))
    }
}
let password = "correct horse"
try await vault.auth.storeRefreshToken(withNewPassword: password)
print("registered \(userId)")

// Every later start: the password opens the stored refresh token.
do {
    // The access token is opaque or a JWT, as the issuer makes it: `token` goes into "Authorization: Bearer".
    let accessToken = try await vault.auth.loginWithPassword(password: password)
    print(accessToken.userId, accessToken.expireDate as Any, accessToken.jwt?["scope"] as String? ?? "opaque")
} catch where error.isWrongPassword {
    print("wrong password; the third in a row locks the key")
} catch where error.isKeyLocked {
    print("locked: log in with OpenID Connect again and set a new password")
} catch {
    print("login failed: \(error)")  // every error says what happened and what to do
}
let fresh = try await vault.auth.getAccessToken()  // cached until the leeway (60 s, at most a quarter of its life)
print("fresh token for \(fresh.userId)")
try await vault.auth.logout(clearUser: true)  // revokes at the issuer and forgets the user here
