/// A user the identity provider knows: the password grant checks `password`, and the
/// authorization endpoint signs in `users[0]` of the configuration without asking.
public struct MockUser: Sendable {
    /// The name the password grant takes (`username`), also `preferred_username` in tokens.
    public var username: String
    /// The password the password grant takes.
    public var password: String
    /// The `sub` claim of every token issued to this user.
    public var subject: String
    /// The `login_provider` claim of every token issued to this user.
    public var loginProvider: String

    /// A user; `loginProvider` defaults to `"password"`.
    public init(username: String, password: String, subject: String, loginProvider: String = "password") {
        self.username = username
        self.password = password
        self.subject = subject
        self.loginProvider = loginProvider
    }
}
