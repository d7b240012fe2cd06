public import KeyServiceCore

/// The TLS the mock answers with: the key service's own type (a certificate chain and its private key, from PEM),
/// named here so that a test importing only KeyServiceMock can build one.
public typealias ServerTLS = KeyServiceCore.ServerTLS
