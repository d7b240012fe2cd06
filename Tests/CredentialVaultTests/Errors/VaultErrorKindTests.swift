import CredentialVault
import Testing

/// A caller asks questions rather than matching kinds, so a question keeps its answer when kinds are added.
@Suite("VaultError: kinds and the questions they answer")
struct VaultErrorKindTests {
    /// The questions a kind alone answers.
    enum Question: CaseIterable, Sendable {
        case isWrongPassword
        case isKeyLocked
        case isDeviceUnlockFailed
        case isNetworkError
        case isLoginExpired
        case isNotRegistered
        case isConfigurationError

        func answer(_ error: VaultError) -> Bool {
            switch self {
            case .isWrongPassword: error.isWrongPassword
            case .isKeyLocked: error.isKeyLocked
            case .isDeviceUnlockFailed: error.isDeviceUnlockFailed
            case .isNetworkError: error.isNetworkError
            case .isLoginExpired: error.isLoginExpired
            case .isNotRegistered: error.isNotRegistered
            case .isConfigurationError: error.isConfigurationError
            }
        }
    }

    /// Every kind, with the questions it answers yes to.
    static let table: [(VaultError.Kind, Set<Question>)] = [
        (.wrongPassword, [.isWrongPassword]),
        (.keyLocked, [.isKeyLocked]),
        (.keyMissing, []),
        (.serverRefused, []),
        (.unexpectedAnswer, []),
        (.unreachable, [.isNetworkError]),
        (.timedOut, [.isNetworkError]),
        (.insecureURL, [.isConfigurationError]),
        (.invalidConfiguration, [.isConfigurationError]),
        (.discoveryFailed, [.isConfigurationError]),
        (.notRegistered, [.isNotRegistered]),
        (.notLoggedIn, []),
        (.loginExpired, [.isLoginExpired]),
        (.noRefreshToken, []),
        (.openIDConnectFailed, []),
        (.revocationFailed, []),
        (.deviceUnlockFailed, [.isDeviceUnlockFailed]),
        (.permissionsTooOpen, []),
        (.wrongOwner, []),
        (.unsupportedFormat, []),
        (.damagedRecord, []),
        (.fileSystemFailed, []),
        (.envelopeDidNotOpen, []),
        (.wrongKey, []),
        (.invalidUserId, []),
        (.lockTimeout, []),
        (.cryptoFailed, []),
        (.cancelled, []),
    ]

    @Test("each kind answers yes to exactly its questions", arguments: table)
    func questions(kind: VaultError.Kind, yes: Set<Question>) {
        let error = VaultError(kind, reason: "what happened")
        for question in Question.allCases {
            #expect(question.answer(error) == yes.contains(question), "\(kind): \(question)")
        }
    }

    @Test("the table names each kind once, and kinds are told apart by value and by name")
    func kindsAreDistinct() {
        let kinds = Self.table.map(\.0)
        #expect(Set(kinds).count == kinds.count)
        #expect(Set(kinds.map(\.description)).count == kinds.count)
        #expect(VaultError.Kind.timedOut.description == "timedOut")
        #expect(VaultError.Kind.timedOut != .unreachable)
    }

    @Test("an error made by an implementation keeps its kind, words, host and status")
    func publicInitialiser() {
        let error = VaultError(.timedOut, reason: "No answer from keys.example.com.", host: "keys.example.com")
        #expect(error.kind == .timedOut)
        #expect(error.isNetworkError)
        #expect(error.description == "No answer from keys.example.com.")
        #expect(error.host == "keys.example.com")
        #expect(error.httpStatus == nil)
        let refused = VaultError(.serverRefused, reason: "Refused.", httpStatus: 503)
        #expect(refused.httpStatus == 503)
        #expect(!refused.isNetworkError)
    }
}
