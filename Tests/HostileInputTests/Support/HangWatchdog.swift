import Foundation
import Synchronization

/// Watches one run's inputs from a thread of its own: an input still running past the hang bound has its seed
/// printed at once (the run may never come back to print it), and one still running long after that ends the
/// process, so a hang fails CI with its seed instead of running into CI's time limit.
///
/// The run itself counts an input that took longer than the bound as a hang when it returns; this only makes sure
/// an input that never returns is reported too.
final class HangWatchdog: Sendable {
    private struct State {
        var index: Int?
        var seed = ""
        var started = ContinuousClock.now
        var reported = false
        var stopped = false
    }

    private let parser: String
    private let bound: Duration
    private let abortAfter: Duration
    private let replay: @Sendable (String) -> String
    private let state = Mutex(State())

    /// - Parameters:
    ///   - parser: the parser's name, for the report.
    ///   - bound: how long one input may run before it is reported.
    ///   - abortAfter: how long it may run before the process is ended.
    ///   - replay: the command that replays an input, from its seed.
    init(
        parser: String,
        bound: Duration,
        abortAfter: Duration,
        replay: @escaping @Sendable (String) -> String
    ) {
        self.parser = parser
        self.bound = bound
        self.abortAfter = abortAfter
        self.replay = replay
    }

    /// Starts watching, on a thread of its own (it sleeps between looks: never on Swift's cooperative pool).
    func start() {
        let thread = Thread { [self] in watch() }
        thread.name = "hostile-input-watchdog"
        thread.start()
    }

    /// Stops watching; the thread ends at its next look.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Input `index`, of seed `seed`, starts now.
    func begin(_ index: Int, seed: String) {
        state.withLock { state in
            state.index = index
            state.seed = seed
            state.started = .now
            state.reported = false
        }
    }

    /// The current input returned.
    func end() {
        state.withLock { $0.index = nil }
    }

    private func watch() {
        let look = min(bound / 4, .seconds(1))
        while true {
            Thread.sleep(forTimeInterval: Self.seconds(look))
            let (stopped, report, abort) = state.withLock { state -> (Bool, String?, String?) in
                guard !state.stopped else { return (true, nil, nil) }
                guard let index = state.index else { return (false, nil, nil) }
                let running = state.started.duration(to: .now)
                let line =
                    "PROOF fuzz: HANG \(parser) input #\(index) has run for \(String(format: "%.1f", Self.seconds(running))) s and goes on; "
                    + "replay: \(replay(state.seed))"
                if running > abortAfter { return (false, nil, line) }
                guard running > bound, !state.reported else { return (false, nil, nil) }
                state.reported = true
                return (false, line, nil)
            }
            if stopped { return }
            if let report { print(report) }
            if let abort { fatalError(abort) }
        }
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
