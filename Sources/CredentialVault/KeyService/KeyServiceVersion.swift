/// The key-service protocol a key speaks.
///
/// Version 1 is TIM's: the login sends a secret derived from the password, which the key service checks. Version 2
/// sends only an OPRF-blinded element (RFC 9497): the key service counts the attempt and evaluates it with the key's
/// OPRF key, and learns neither the password nor whether the guess was right. An envelope records its key's version
/// in its authenticated header, so a version 1 login of a version 2 key is refused, never a fallback.
public enum KeyServiceVersion: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// TIM KeyService v1 (`{realmBase}/keyservice/v1/`): the default, and what TIM deployments serve.
    case v1 = 1
    /// Protocol v2 (`{realmBase}/keyservice/v2/`): OPRF over ristretto255, served by `keyservice` and
    /// `keyservice-mock`.
    case v2 = 2

    /// `v1` or `v2`.
    public var description: String { "v\(rawValue)" }
}
