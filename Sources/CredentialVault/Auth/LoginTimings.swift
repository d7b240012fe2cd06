extension Auth {
    /// How long the steps of a password login took: what the login benchmark reports. Not part of the API promise:
    /// `@_spi(LoginTimings) import CredentialVault` to read it (the Benchmarks package is another package, so
    /// `package` would not reach it).
    @_spi(LoginTimings)
    public struct LoginTimings: Sendable {
        /// Argon2id.
        public let keyDerivation: Duration
        /// The key service's `key` call.
        public let keyService: Duration
        /// The refresh_token grant.
        public let tokenEndpoint: Duration
        /// Sealing the rotated refresh token and writing the envelope (zero when nothing rotated).
        public let sealAndWrite: Duration
    }
}
