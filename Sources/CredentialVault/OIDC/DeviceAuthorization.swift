public import Foundation

/// What a user needs to approve a device login (RFC 8628 section 3.3): where to go, and the code to enter there.
///
/// ``Auth/performDeviceAuthorizationFlow(userId:scopes:maximumPolls:presentUserCode:)`` hands it to the app, which
/// shows it (a CLI prints it on standard error; an app may show `verificationURIComplete` as a QR code). It holds no
/// secret: the device code it was issued with stays inside the library.
public struct DeviceAuthorization: Sendable, Equatable {
    /// Where the user goes, on any device with a browser (`verification_uri`).
    public let verificationURI: URL
    /// The code the user enters there (`user_code`).
    public let userCode: String
    /// The same page with the user code filled in (`verification_uri_complete`), when the issuer gives one.
    public let verificationURIComplete: URL?
    /// How long the user has to approve, in seconds (`expires_in`, at most ``maximumLifetime``).
    public let expiresIn: Int
    /// The seconds between polls the issuer asked for (`interval`), or 5 when it gave none (RFC 8628 section 3.2).
    public let interval: Int

    /// The longest wait for the user taken from `expires_in`: one hour, so a wrong answer cannot keep a login
    /// polling for days.
    public static let maximumLifetime = 3600
    /// The longest interval taken from `interval`, in seconds.
    public static let maximumInterval = 60
    /// The interval when the issuer gives none (RFC 8628 section 3.2).
    public static let defaultInterval = 5

    /// A device authorization as the issuer described it.
    public init(
        verificationURI: URL,
        userCode: String,
        verificationURIComplete: URL?,
        expiresIn: Int,
        interval: Int = defaultInterval
    ) {
        self.verificationURI = verificationURI
        self.userCode = userCode
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }
}
