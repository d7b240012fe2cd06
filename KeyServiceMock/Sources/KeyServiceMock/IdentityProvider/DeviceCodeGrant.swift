import Foundation
import Hummingbird
import KeyServiceCore
import Logging

/// The device authorization grant (RFC 8628) of ``DeviceFlowMode``: the device authorization endpoint, the
/// verification page, and the token endpoint's answers to a device code.
struct DeviceCodeGrant {
    /// The grant type's URN (RFC 8628 section 3.4).
    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"

    let provider: IdentityProvider
    let mode: DeviceFlowMode

    private var now: Date { provider.configuration.now() }

    /// The device authorization answer (RFC 8628 section 3.2) for a configured client's request.
    func authorize(_ fields: FormFields, logger: Logger) throws -> Response {
        let clientId = try fields.required("client_id")
        guard provider.configuredClient(clientId) != nil else {
            throw RequestRefusal.oauth("invalid_client", "unknown client_id")
        }
        let scope = fields["scope"] ?? "openid"
        let codes = provider.deviceGrants.issue(
            clientId: clientId,
            scope: scope,
            expiresAt: now.addingTimeInterval(TimeInterval(mode.expiresIn))
        )
        let verification = provider.discoveredURL(Layout.deviceVerification)
        var answer: [String: JSONValue] = [
            "device_code": .string(codes.deviceCode),
            "user_code": .string(codes.userCode),
            "verification_uri": .string(verification),
            "verification_uri_complete": .string(
                RedirectURI.appending([("user_code", codes.userCode)], to: verification)
            ),
            "expires_in": .number(mode.expiresIn),
        ]
        if let interval = mode.interval { answer["interval"] = .number(interval) }
        logger.debug("device code issued", metadata: ["client_id": "\(clientId)"])
        return .json(JSONValue.object(answer))
    }

    /// The verification page: `user_code` approves as the first configured user (`action=deny` denies), as the
    /// authorization endpoint signs that user in without asking.
    func verify(_ fields: FormFields, logger: Logger) throws -> Response {
        let userCode = try fields.required("user_code")
        let deny = fields["action"] == "deny"
        guard let user = provider.configuration.users.first else {
            throw RequestRefusal.oauth("access_denied", "no user is configured")
        }
        guard provider.deviceGrants.decide(userCode: userCode, deny ? .denied : .approved(user), at: now) else {
            throw RequestRefusal.invalidRequest("the user code is unknown, already used or expired")
        }
        logger.debug("device code \(deny ? "denied" : "approved") at the verification page")
        return .text(deny ? "The device was denied access.\n" : "The device is signed in. You may close this page.\n")
    }

    /// The session the device code `fields` names, for `clientId`, once the user approved it; every other state is
    /// its RFC 8628 section 3.5 error.
    func poll(_ fields: FormFields, clientId: String) throws -> Session {
        let deviceCode = try fields.required("device_code")
        guard let record = provider.deviceGrants.poll(deviceCode), record.clientId == clientId else {
            throw RequestRefusal.invalidGrant("not a device code of this client")
        }
        guard record.expiresAt > now else {
            provider.deviceGrants.remove(deviceCode)
            throw RequestRefusal.oauth("expired_token", "the device code has expired")
        }
        if mode.slowDownPolls.contains(record.polls) {
            throw RequestRefusal.oauth("slow_down", "polling too often: wait 5 s more from now on")
        }
        switch record.decision {
        case .pending:
            throw RequestRefusal.oauth("authorization_pending", "the user has not acted yet")
        case .denied:
            provider.deviceGrants.remove(deviceCode)
            throw RequestRefusal.oauth("access_denied", "the user denied the device")
        case .approved(let user):
            provider.deviceGrants.remove(deviceCode)
            return try provider.sessions.startSession(
                user: user,
                clientId: clientId,
                scope: provider.grantedScope(requested: record.scope),
                at: now,
                authenticatedAt: now.addingTimeInterval(-provider.configuration.authenticationAge)
            )
        }
    }
}
