import Synchronization

/// A one-shot flag, which a blocked call may wait on with an upper bound so that no test can hang on it.
final class Gate: Sendable {
    private let opened = Atomic(false)

    func open() { opened.store(true, ordering: .sequentiallyConsistent) }

    var isOpen: Bool { opened.load(ordering: .sequentiallyConsistent) }

    /// Polls every 10 ms until opened or `limit` has passed.
    func wait(atMost limit: Duration) async {
        let end = ContinuousClock.now + limit
        while !isOpen, ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
