extension Auth {
    /// Opens the stored refresh token with `password`, redeems it at the token endpoint and returns the
    /// access token (opaque or a JWT). A rotated refresh token is sealed with the same data key and written atomically
    /// before this returns (unless `storeNewRefreshToken` is false: then it lives in memory only).
    /// - Parameters:
    ///   - userId: the user; nil when exactly one user is stored.
    ///   - password: the password the refresh token was sealed under.
    ///   - storeNewRefreshToken: false keeps a rotated refresh token in memory only, and the session then keeps no
    ///     unlocked envelope.
    /// - Returns: the access token, also kept for ``getAccessToken(forceRefresh:)``.
    /// - Throws: ``VaultError``: `isWrongPassword`, `isKeyLocked`, `isLoginExpired`, `isNotRegistered`, ...
    public func loginWithPassword(
        userId: String? = nil,
        password: String,
        storeNewRefreshToken: Bool = true
    ) async throws(VaultError) -> AccessToken {
        try await userStorage.withSessionLock { (held) async throws(VaultError) in
            // Found under the session lock, so that the envelope read to find the user is the one unlocked.
            let (userId, read): (String, UserStorage.EnvelopeFile?) =
                if let userId { (userId, nil) } else { try await userStorage.soleUser() }
            var reservation: Result<StoreReservation, VaultError>?
            let (token, envelope) = try await userStorage.unlock(
                userId: userId,
                read: read,
                password: password,
                reservingSpace: storeNewRefreshToken,
                reservation: &reservation,
                under: held
            )
            return try await begin(
                userId: userId,
                refreshToken: token,
                envelope: envelope,
                persist: storeNewRefreshToken,
                reservation: reservation,
                under: held
            )
        }
    }

    /// Like ``loginWithPassword(userId:password:storeNewRefreshToken:)`` with the device secret instead of
    /// the password (THP's biometric login).
    /// - Throws: ``VaultError``: `isDeviceUnlockFailed` when it is off or refused, `isKeyLocked`, ...
    public func loginWithDeviceUnlock(
        userId: String? = nil,
        storeNewRefreshToken: Bool = true
    ) async throws(VaultError) -> AccessToken {
        let userId = try await resolveUser(userId)
        return try await userStorage.withSessionLock { (held) async throws(VaultError) in
            let (token, envelope) = try await userStorage.unlockViaDeviceUnlock(userId: userId, under: held)
            return try await begin(
                userId: userId,
                refreshToken: token,
                envelope: envelope,
                persist: storeNewRefreshToken,
                under: held
            )
        }
    }

    /// Turns device unlock on for the open session's user with what the session already holds: no
    /// Argon2id and no key-service call (``UserStorage/enableDeviceUnlock(userId:password:)`` costs both).
    /// - Throws: ``VaultError`` `.notLoggedIn` without a session, and also (saying so) when the session keeps
    ///   no unlocked envelope: after an OpenID Connect login with no password yet (call
    ///   ``storeRefreshToken(withNewPassword:)`` first) or a login with `storeNewRefreshToken: false`.
    public func enableDeviceUnlock() async throws(VaultError) {
        guard let current = session else { throw .notLoggedIn }
        guard let envelope = current.envelope else { throw .noUnlockedEnvelope }
        try await userStorage.withSessionLock { (held) async throws(VaultError) in
            try await userStorage.enableDeviceUnlock(envelope, under: held)
        }
    }

    /// Ends any session, redeems `refreshToken` (sealing a rotated one into `envelope`, in the space `reservation`
    /// holds when the unlock reserved one, if `persist`) and starts the session for `userId` with what came back.
    private func begin(
        userId: String,
        refreshToken: RefreshToken,
        envelope: UnlockedEnvelope,
        persist: Bool,
        reservation: Result<StoreReservation, VaultError>? = nil,
        under held: borrowing HeldSessionLock
    ) async throws(VaultError) -> AccessToken {
        endSession()
        let redeemed: Redemption
        if persist {
            redeemed = try await redeem(refreshToken, sealingIn: envelope, reserved: reservation, under: held)
        } else {
            redeemed = try await redeem(refreshToken)
        }
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
