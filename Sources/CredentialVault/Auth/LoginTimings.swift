extension Auth {
    /// How long the steps of a password login took: what the login benchmark reports.
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
