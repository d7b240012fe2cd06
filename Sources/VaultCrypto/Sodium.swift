internal import CSodium

/// One-time libsodium initialisation; every entry point of this module touches it first.
enum Sodium {
    /// `sodium_init()` is thread-safe and idempotent; a `static let` runs it exactly once.
    static let ready: Void = {
        guard sodium_init() >= 0 else {
            fatalError("libsodium failed to initialise: no secure random source is available")
        }
    }()

    @inline(__always)
    static func ensureReady() {
        _ = ready
    }
}
