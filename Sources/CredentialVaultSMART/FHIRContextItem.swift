public import CredentialVault

/// One entry of a launch's `fhirContext` (SMART App Launch 2.2): a resource the app was launched with.
public struct FHIRContextItem: Sendable, Hashable {
    /// `reference`: a relative reference such as `Encounter/123`.
    public let reference: String?
    /// `canonical`: a canonical URL, such as a Questionnaire's, optionally with `|version`.
    public let canonical: String?
    /// `identifier`: a FHIR Identifier, as sent.
    public let identifier: JSONValue?
    /// `type`: the resource type, when given.
    public let type: String?
    /// `role`: why the resource is in context (absent means `launch`).
    public let role: String?
    /// Every other field of the entry, as sent.
    public let additionalFields: [String: JSONValue]

    static let knownFields: Set<String> = ["reference", "canonical", "identifier", "type", "role"]

    /// The entry in `json`; nil when it is not a JSON object.
    init?(_ json: JSONValue) {
        guard let object = json.objectValue else { return nil }
        reference = object["reference"]?.stringValue
        canonical = object["canonical"]?.stringValue
        identifier = object["identifier"]
        type = object["type"]?.stringValue
        role = object["role"]?.stringValue
        additionalFields = object.filter { !Self.knownFields.contains($0.key) }
    }
}
