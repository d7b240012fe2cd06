public import Foundation
import NIOConcurrencyHelpers

/// A clock that moves only when told, so tests expire tokens without sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// var configuration = KeyServiceMockConfiguration()
/// configuration.now = clock.dateProvider
/// clock.advance(by: 301)   // every access token issued before is now expired
/// ```
public final class ManualClock: Sendable {
    private let current: NIOLockedValueBox<Date>
    private let start: Date
    private let startInstant = ContinuousClock.now

    /// A clock that starts at `start` (the real time now, by default).
    public init(_ start: Date = Date()) {
        current = NIOLockedValueBox(start)
        self.start = start
    }

    /// The clock's time.
    public var now: Date { current.withLockedValue { $0 } }

    /// Moves the clock forward (or backward, for a negative interval) by `interval` seconds.
    public func advance(by interval: TimeInterval) {
        current.withLockedValue { $0 += interval }
    }

    /// A closure that reads this clock, to pass as ``KeyServiceMockConfiguration/now``.
    public var dateProvider: @Sendable () -> Date {
        { [self] in self.now }
    }

    /// A monotonic instant that moves with this clock (and only with it): the instant the clock was made, plus how far
    /// it has moved since. For a client that measures durations on a monotonic clock.
    public var instantProvider: @Sendable () -> ContinuousClock.Instant {
        { [self] in self.startInstant.advanced(by: .seconds(self.now.timeIntervalSince(self.start))) }
    }
}
