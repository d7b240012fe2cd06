extension Auth {
    /// Opens the stored refresh token with `password`, redeems it at the token endpoint and returns the
    /// access token (opaque or a JWT). A rotated refresh token is sealed with the same data key and written atomically
    /// before this returns (unless `storeNewRefreshToken` is false: then it lives in memory only).
    /// - Parameter userId: the user; nil when exactly one user is stored.
    /// - Throws: ``VaultError``: `isWrongPassword`, `isKeyLocked`, `isLoginExpired`, `isNotRegistered`, ...
    public func loginWithPassword(
        userId: String? = nil,
        password: String,
        storeNewRefreshToken: Bool = true
    ) async throws(VaultError) -> AccessToken {
        let userId = try await resolveUser(userId)
        let lock = try await userStorage.sessionLock()
        defer { withExtendedLifetime(lock) {} }
        var reservation: Result<StoreReservation, VaultError>?
        let (token, envelope) = try await userStorage.unlock(
            userId: userId,
            password: password,
            reservingSpace: storeNewRefreshToken,
            reservation: &reservation
        )
        return try await begin(
            userId: userId,
            refreshToken: token,
            envelope: envelope,
            persist: storeNewRefreshToken,
            reservation: reservation
        )
    }

    /// Like ``loginWithPassword(userId:password:storeNewRefreshToken:)`` with the device secret instead of
    /// the password (THP's biometric login).
    /// - Throws: ``VaultError``: `isDeviceUnlockFailed` when it is off or refused, `isKeyLocked`, ...
    public func loginWithDeviceUnlock(
        userId: String? = nil,
        storeNewRefreshToken: Bool = true
    ) async throws(VaultError) -> AccessToken {
        let userId = try await resolveUser(userId)
        let lock = try await userStorage.sessionLock()
        defer { withExtendedLifetime(lock) {} }
        let (token, envelope) = try await userStorage.unlockViaDeviceUnlock(userId: userId)
        return try await begin(userId: userId, refreshToken: token, envelope: envelope, persist: storeNewRefreshToken)
    }

    /// Turns device unlock on for the open session's user with what the session already holds: no
    /// Argon2id and no key-service call (``UserStorage/enableDeviceUnlock(userId:password:)`` costs both).
    /// - Throws: ``VaultError`` `.notLoggedIn` without a session, and also (saying so) when the session keeps
    ///   no unlocked envelope: after an OpenID Connect login with no password yet (call
    ///   ``storeRefreshToken(withNewPassword:)`` first) or a login with `storeNewRefreshToken: false`.
    public func enableDeviceUnlock() async throws(VaultError) {
        guard let current = session else { throw .notLoggedIn }
        guard let envelope = current.envelope else { throw .noUnlockedEnvelope }
        let lock = try await userStorage.sessionLock()
        defer { withExtendedLifetime(lock) {} }
        try await userStorage.enableDeviceUnlock(envelope)
    }

    /// - Parameter reservation: the space the unlock reserved for the envelope, if it did.
    private func begin(
        userId: String,
        refreshToken: RefreshToken,
        envelope: UnlockedEnvelope,
        persist: Bool,
        reservation: Result<StoreReservation, VaultError>? = nil
    ) async throws(VaultError) -> AccessToken {
        endSession()
        let redeemed = try await redeem(refreshToken, sealingIn: persist ? envelope : nil, reserved: reservation)
        if let timings = envelope.timings {
            lastLoginTimings = LoginTimings(
                keyDerivation: timings.keyDerivation,
                keyService: timings.keyService,
                tokenEndpoint: redeemed.tokenEndpointTime,
                sealAndWrite: redeemed.persistTime
            )
        }
        session = ActiveSession(userId: userId, refreshToken: redeemed.refreshToken, envelope: persist ? envelope : nil)
        keep(redeemed.accessToken, until: redeemed.freshUntil)
        return redeemed.accessToken
    }
}
