internal import CSodium

/// One-time libsodium initialisation and the one check of libsodium's status codes.
enum Sodium {
    /// `sodium_init()` is thread-safe and idempotent; a `static let` runs it exactly once.
    static let ready: Void = {
        // sodium_init alone answers 1 for "already initialised", so it is the one status not checked below.
        guard sodium_init() >= 0 else {
            fatalError("libsodium failed to initialise: no secure random source is available")
        }
    }()

    @inline(__always)
    static func ensureReady() {
        _ = ready
    }

    /// Turns a libsodium status (0 success, -1 failure) into a ``CryptoError`` with `code` and `reason`.
    static func check(
        _ status: Int32,
        _ code: CryptoError.Code,
        _ reason: @autoclosure () -> String
    ) throws(CryptoError) {
        guard status == 0 else { throw CryptoError(code, reason()) }
    }

    /// Checks the status of a call documented as unable to fail with the arguments this module passes (libsodium's,
    /// or `munlock` of what `mlock` locked): a failure here is a bug in VaultCrypto or below it, not bad input, so it
    /// stops the process.
    static func check(_ status: Int32, cannotFail function: StaticString) {
        precondition(status == 0, "\(function) failed, which it cannot do with valid arguments")
    }
}
