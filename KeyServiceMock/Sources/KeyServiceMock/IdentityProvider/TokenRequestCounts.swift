import NIOConcurrencyHelpers

/// How many requests the token endpoint answered for each `grant_type`, taken or refused, so a test can show
/// that a client reused a token rather than asking again.
final class TokenRequestCounts: Sendable {
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    func count(_ grantType: String) {
        counts.withLockedValue { $0[grantType, default: 0] += 1 }
    }

    func requests(grantType: String) -> Int {
        counts.withLockedValue { $0[grantType] ?? 0 }
    }
}
