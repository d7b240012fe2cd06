public import CredentialVault
public import Foundation

/// The context a SMART app was launched with, as sealed with its refresh token: the same after a password login in
/// a new process as at the launch.
///
/// The server's fields come from the token response (SMART App Launch 2.2, "Launch context arrives with your
/// access token"); a refresh that omits them leaves them as they were. Fields the library does not know are kept
/// in ``additionalFields``. The FHIR base, issuer, token endpoint, client id and `fhirUser` are what the app
/// recorded at the launch.
public struct LaunchContext: Sendable, Hashable {
    /// `patient`: the id of the patient in context.
    public let patient: String?
    /// `encounter`: the id of the encounter in context.
    public let encounter: String?
    /// `fhirContext`: every other resource in context.
    public let fhirContext: [FHIRContextItem]
    /// `need_patient_banner`: whether the app must show the patient's banner.
    public let needPatientBanner: Bool?
    /// `smart_style_url`: the EHR's style sheet for the app.
    public let smartStyleURL: String?
    /// `intent`: what the EHR launched the app to do.
    public let intent: String?
    /// `tenant`: the EHR's tenant.
    public let tenant: String?
    /// The id token's `fhirUser` at the launch (such as `Practitioner/123`; it may be relative to the FHIR base).
    public let fhirUser: String?
    /// The scope the server granted, exactly (it can differ from the request).
    public let scope: SMARTScopes?
    /// The FHIR server the app was launched against: the authorization request's `aud`.
    public let fhirBase: URL?
    /// The server's OpenID Connect issuer, when it stated one.
    public let issuer: String?
    /// The token endpoint the refresh token belongs to.
    public let tokenEndpoint: URL?
    /// The client the refresh token is bound to.
    public let clientId: String?
    /// Whether the launch was an EHR launch (`launch` from the EHR) rather than standalone.
    public let isEHRLaunch: Bool
    /// Every field of the token responses the library does not know, as sent (`token_type`, always `Bearer`, is not
    /// kept here).
    public let additionalFields: [String: JSONValue]

    /// The fields of a session context the server sends that are read into properties.
    static let serverFields: Set<String> = [
        "patient", "encounter", "fhirContext", "need_patient_banner", "smart_style_url", "intent", "tenant", "scope",
        "token_type",
    ]

    /// The launch context kept in `sessionContext` (``Auth/sessionContext``).
    public init(sessionContext context: [String: JSONValue]) {
        patient = context["patient"]?.stringValue
        encounter = context["encounter"]?.stringValue
        fhirContext = context["fhirContext"]?.arrayValue?.compactMap(FHIRContextItem.init) ?? []
        needPatientBanner = context["need_patient_banner"]?.boolValue
        smartStyleURL = context["smart_style_url"]?.stringValue
        intent = context["intent"]?.stringValue
        tenant = context["tenant"]?.stringValue
        scope = context["scope"]?.stringValue.map(SMARTScopes.init)
        let launch = LaunchRecord(context[LaunchRecord.key])
        fhirUser = launch.fhirUser
        fhirBase = launch.fhirBase.flatMap(URL.init(string:))
        issuer = launch.issuer
        tokenEndpoint = launch.tokenEndpoint.flatMap(URL.init(string:))
        clientId = launch.clientId
        isEHRLaunch = launch.isEHRLaunch
        additionalFields = context.filter { !Self.serverFields.contains($0.key) && $0.key != LaunchRecord.key }
    }
}
