import CredentialVault

/// What the app records about a launch in the session context, under one key of its own (``key``) so that no
/// field a server sends can be mistaken for it.
struct LaunchRecord {
    static let key = "credential_vault_smart"

    var fhirBase: String?
    var issuer: String?
    var tokenEndpoint: String?
    var clientId: String?
    var fhirUser: String?
    var isEHRLaunch = false

    init(
        fhirBase: String?,
        issuer: String?,
        tokenEndpoint: String?,
        clientId: String?,
        fhirUser: String?,
        isEHRLaunch: Bool
    ) {
        self.fhirBase = fhirBase
        self.issuer = issuer
        self.tokenEndpoint = tokenEndpoint
        self.clientId = clientId
        self.fhirUser = fhirUser
        self.isEHRLaunch = isEHRLaunch
    }

    /// The record in a session context's ``key`` value; empty when there is none.
    init(_ json: JSONValue?) {
        fhirBase = json?["fhir_base"]?.stringValue
        issuer = json?["issuer"]?.stringValue
        tokenEndpoint = json?["token_endpoint"]?.stringValue
        clientId = json?["client_id"]?.stringValue
        fhirUser = json?["fhir_user"]?.stringValue
        isEHRLaunch = json?["launch"]?.stringValue == "ehr"
    }

    /// The record as a session-context value.
    var json: JSONValue {
        var object: [String: JSONValue] = ["launch": .string(isEHRLaunch ? "ehr" : "standalone")]
        if let fhirBase { object["fhir_base"] = .string(fhirBase) }
        if let issuer { object["issuer"] = .string(issuer) }
        if let tokenEndpoint { object["token_endpoint"] = .string(tokenEndpoint) }
        if let clientId { object["client_id"] = .string(clientId) }
        if let fhirUser { object["fhir_user"] = .string(fhirUser) }
        return .object(object)
    }
}
