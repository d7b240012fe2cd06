import CredentialVault
import CredentialVaultSMART
import Foundation

/// `fhir get` with the access token (and, for a DPoP-bound login, each proof) of the running `credential-vault agent`:
/// no password, no key service, no refresh here while the agent's token is fresh. The FHIR requests themselves go
/// from this process, to the FHIR server only (``FHIRAccess`` refuses any URL outside ``fhirBase``).
actor AgentFHIRAccess: FHIRAccess {
    nonisolated let fhirBase: URL
    nonisolated let fhirConnection: FHIRConnection
    private let address: AgentAddress
    /// The last token the agent handed out here, reused while it stays valid for ``reuseMargin``.
    private var current: AccessToken?
    /// The FHIR server's `DPoP-Nonce`, for the next proof the agent signs.
    private var nonce: String?
    /// Why the agent failed a request, with its message and exit status: thrown instead of the ``VaultError`` the
    /// ``FHIRAccess`` requests see.
    private(set) var failure: CLIError?

    /// How long a token taken from the agent must stay valid to be used again here without asking.
    static let reuseMargin: TimeInterval = 60

    private init(fhirBase: URL, connection: FHIRConnection, address: AgentAddress, first: AccessToken) {
        self.fhirBase = fhirBase
        fhirConnection = connection
        self.address = address
        current = first
    }

    /// The agent's access to the FHIR server these options name; nil when none is configured (the caller then says
    /// so on its own path) or no agent serves the store and user.
    /// - Throws: ``CLIError`` with the agent's message and exit status when it answers with a failure.
    static func make(_ options: ConnectionOptions) async throws -> AgentFHIRAccess? {
        let settings = try Settings(options: options)
        guard settings.fhir.value != nil, let address = await VaultContext.agentAddress(options),
            let first = try await Self.token(at: address, requirement: TokenRequirement())
        else { return nil }
        let (fhirBase, connection) = try VaultContext.fhirConnection(settings)
        return AgentFHIRAccess(fhirBase: fhirBase, connection: connection, address: address, first: first)
    }

    /// The agent's token meeting `requirement`; nil when no agent answers there.
    private static func token(at address: AgentAddress, requirement: TokenRequirement) async throws -> AccessToken? {
        guard let served = try await AgentClient.token(at: address, requirement: requirement) else { return nil }
        return AccessToken(
            token: served.token,
            userId: served.userId,
            expiresIn: served.expireDate?.timeIntervalSinceNow,
            now: Date(),
            tokenType: served.tokenType
        )
    }

    func getAccessToken(forceRefresh: Bool) async throws(VaultError) -> AccessToken {
        if !forceRefresh, let current, let expiry = current.expireDate,
            expiry.timeIntervalSinceNow > Self.reuseMargin
        {
            return current
        }
        do {
            guard
                let token = try await Self.token(at: address, requirement: TokenRequirement(forceRefresh: forceRefresh))
            else { throw CLIError.other("the agent on \(address.socketPath) stopped answering") }
            current = token
            return token
        } catch {
            throw remember(error)
        }
    }

    func dpopProof(method: String, url: URL, accessToken: AccessToken) async throws(VaultError) -> String? {
        guard accessToken.isDPoPBound else { return nil }
        do {
            guard
                let (proof, token) = try await AgentClient.dpopProof(
                    at: address,
                    method: method,
                    url: url,
                    nonce: nonce
                )
            else { throw CLIError.other("the agent on \(address.socketPath) stopped answering") }
            // The proof's ath is the hash of the agent's token now: a newer one than this request's cannot go with it.
            guard token == nil || token == accessToken.token else {
                throw CLIError.other("the agent's access token changed while a proof was made; run it again")
            }
            return proof
        } catch {
            throw remember(error)
        }
    }

    func rememberDPoPNonce(from response: HTTPResponse, for url: URL) async -> Bool {
        guard let given = response.headers["dpop-nonce"] else { return false }
        nonce = given
        return DPoPProofs.nonceRequested(by: response) != nil
    }

    /// Keeps `error` as the failure to report, and hands the requests a ``VaultError`` that ends them.
    private func remember(_ error: any Error) -> VaultError {
        let cliError = CLIError.from(error)
        failure = cliError
        return VaultError(.notLoggedIn, reason: cliError.description)
    }
}
