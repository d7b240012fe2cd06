public import CredentialVault
public import Foundation
public import Logging

/// How a ``FHIRAccess`` client sends its requests: the transport, the time one answer may take, the logger.
public struct FHIRConnection: Sendable {
    /// The largest FHIR answer read: 16 MiB.
    public static let maximumAnswerSize = 16 << 20
    /// The most search pages followed: a server whose `next` links never end is stopped here.
    public static let maximumPages = 1000

    let transport: any HTTPTransport
    let timeout: TimeInterval
    let logger: Logger

    /// Refuses a FHIR base access tokens must not go to: neither https nor plain http to a loopback address.
    static func check(fhirBase: URL) throws(VaultError) {
        guard fhirBase.isSecureOrLoopback else { throw .insecureURL(fhirBase, role: "the FHIR server", origin: .local) }
    }

    /// A connection over `transport`.
    public init(transport: any HTTPTransport, timeout: TimeInterval, logger: Logger) {
        self.transport = transport
        self.timeout = timeout
        self.logger = logger
    }
}
