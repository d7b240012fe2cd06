public import Foundation

/// What the client keeps between ``OPRF/blind(_:)`` and ``OPRF/finalize(_:blinding:evaluatedElement:)``: the secret
/// blind, and the blinded element it sends.
public struct OPRFBlinding: Sendable {
    /// The blind scalar (32 bytes): secret, used once.
    public let blind: SecureBytes
    /// The blinded element (32 bytes) to send to the server: uniformly random to anyone without the blind.
    public let blindedElement: Data

    init(blind: SecureBytes, blindedElement: Data) {
        self.blind = blind
        self.blindedElement = blindedElement
    }
}
