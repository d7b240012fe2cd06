import CredentialVaultSMART

/// What the SMART commands share: the client, its default scopes, and the client with its session open.
extension VaultContext {
    /// The SMART client, or a configuration error naming how to set the FHIR server.
    func smartClient() throws -> SMARTClient {
        guard let smart else {
            throw CLIError.configuration(
                "no SMART on FHIR server is configured: set --fhir URL or CREDENTIAL_VAULT_FHIR"
            )
        }
        return smart
    }

    /// The SMART client with the stored login unlocked, as `token` unlocks it (device unlock when on, else the
    /// password).
    func unlockedSMARTClient(_ unlocking: UnlockOptions) async throws -> SMARTClient {
        let smart = try smartClient()
        _ = try await unlockRegisteredUser(unlocking)
        return smart
    }
}
