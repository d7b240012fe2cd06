import ArgumentParser

/// `credential-vault fhir`: FHIR requests with the stored login's always-fresh access token.
struct Fhir: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "FHIR requests at the SMART server (--fhir) with an always-fresh access token.",
        subcommands: [FhirGet.self]
    )
}
