import NIOConcurrencyHelpers

/// How many requests the token endpoint answered for each `grant_type`, taken or refused, so a test can show
/// that a client reused a token rather than asking again.
final class TokenRequestCounts: Sendable {
    /// The most distinct `grant_type` values counted: a client sending made-up ones cannot grow the table.
    static let maximumGrantTypes = 64

    private let counts = NIOLockedValueBox<[String: Int]>([:])

    func count(_ grantType: String) {
        counts.withLockedValue { counts in
            guard counts[grantType] != nil || counts.count < Self.maximumGrantTypes else { return }
            counts[grantType, default: 0] += 1
        }
    }

    func requests(grantType: String) -> Int {
        counts.withLockedValue { $0[grantType] ?? 0 }
    }
}
