import CredentialVault
import CredentialVaultSMART
import Foundation

// keyservice-mock --smart serves a FHIR server at {base}/fhir/r4; its key service lives under its issuer.
let base = ProcessInfo.processInfo.environment["BASE"] ?? "http://127.0.0.1:8080"
let fhirBase = URL(string: "\(base)/fhir/r4")!
let configuration = VaultConfiguration(
    issuer: fhirBase,  // for SMART the FHIR server is the issuer: discovery there names the endpoints
    clientId: "vault",
    scopes: ["launch/patient", "openid", "fhirUser", "offline_access", "patient/*.rs"],
    keyServiceURL: URL(string: "\(base)/auth/realms/demo/keyservice/v1")!,
    storeDirectory: FileManager.default.temporaryDirectory.appending(path: "credential-vault-readme-smart")
)

// The launch: .well-known/smart-configuration (else the CapabilityStatement), PKCE S256, aud = the FHIR base.
let app = try SMARTClient(fhirBase: fhirBase, configuration: configuration)
let launched = try await app.authorize { url in
    print("Open \(url) in a browser to log in.")
    // keyservice-mock approves without a page: following its redirect here finishes the launch.
    let transport = DefaultHTTPTransport.make()
    if let answer = try? await transport.send(HTTPRequest(method: "GET", url: url)),
        let location = answer.headers["location"].flatMap({ URL(string: $0) })
    {
        _ = try? await transport.send(HTTPRequest(method: "GET", url: location))
    }
}
// The login itself is the vault's (one door: app.vault().auth); SMARTClient adds the launch and its context.
try await app.vault().auth.storeRefreshToken(withNewPassword: "correct horse")
print("launched for patient \(launched.patient ?? "none") with scope \(launched.scope?.text ?? "")")

// The next start of the app: the password brings back the same launch context.
let later = try SMARTClient(fhirBase: fhirBase, configuration: configuration)
_ = try await later.vault().auth.loginWithPassword(password: "correct horse")
let context = await later.launchContext
print("same context after the password: \(context == launched)")
if let patient = context?.patient {
    let resource = try await later.read("Patient", id: patient)  // JSON; decode it into your own types
    print("read Patient/\(resource["id"]?.stringValue ?? "?")")
}
let pages = try await later.search("Patient?_count=5", allPages: true)  // follows the Bundles' next links
print("\(pages.count) pages, \(pages.flatMap { $0["entry"]?.arrayValue ?? [] }.count) patients")
try await later.vault().auth.logout(clearUser: true)
