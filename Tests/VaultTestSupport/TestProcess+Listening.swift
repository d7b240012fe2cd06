import Foundation

extension TestProcess {
    /// Waits until something listens on `port` on 127.0.0.1 (the port can no longer be held) and `ready` says so too:
    /// true then; false when the process ended first or `timeout` passed. Polled every 50 ms.
    public func waitUntilListening(
        port: UInt16,
        timeout: Duration = .seconds(30),
        ready: () -> Bool = { true }
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if termination != nil { return false }
            if ready(), (try? FreePort.Held(port: port)) == nil { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
