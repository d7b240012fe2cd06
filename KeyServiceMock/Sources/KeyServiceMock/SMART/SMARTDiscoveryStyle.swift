/// How a SMART app finds the authorization server's endpoints.
public enum SMARTDiscoveryStyle: Sendable {
    /// `{fhirBase}/.well-known/smart-configuration` and `{fhirBase}/metadata` both answer (SMART App Launch 2).
    case wellKnown
    /// Only `{fhirBase}/metadata` answers, whose CapabilityStatement carries the `oauth-uris` extension;
    /// `.well-known/smart-configuration` is 404, as on servers built for SMART App Launch 1.
    case capabilityStatementOnly
}
