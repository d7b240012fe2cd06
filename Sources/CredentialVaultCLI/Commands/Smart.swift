import ArgumentParser

/// `credential-vault smart`: SMART on FHIR launches and the launch context sealed with the login.
struct Smart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "SMART on FHIR: launch an app login at a FHIR server, and show the launch context it keeps.",
        discussion: """
            The FHIR server is --fhir URL (or CREDENTIAL_VAULT_FHIR, or the config file's fhir): discovery reads its \
            .well-known/smart-configuration (else its CapabilityStatement), every authorization request names it \
            as aud, and the login is bound to it. The launch context (patient, encounter, fhirContext, the granted \
            scope, fhirUser, ...) is sealed with the refresh token: `credential-vault smart context` in a later process shows \
            the same context after the password.
            """,
        subcommands: [
            SmartLaunch.self, SmartContext.self, SmartClient.self, SmartIntrospect.self, SmartBackend.self,
            SmartBackendKey.self,
        ]
    )
}
