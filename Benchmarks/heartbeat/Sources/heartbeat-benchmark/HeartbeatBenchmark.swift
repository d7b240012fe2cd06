import Foundation
import VaultCrypto

/// The largest pause a task on Swift's cooperative pool sees while 8 Argon2id derivations of the default cost
/// (64 MiB) run at once, beside the same heartbeat with nothing else running, measured in the same process.
/// It prints figures and asserts nothing: they depend on the machine and its load.
@main
enum HeartbeatBenchmark {
    static let derivations = 8
    static let tick = Duration.milliseconds(1)

    static func main() async throws {
        let parameters = try Argon2idParameters.generate()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print(
            "Argon2id heartbeat benchmark: a task sleeps \(milliseconds(tick)) in a loop and records the gaps "
                + "between its ticks"
        )
        print(
            "\(derivations) concurrent derivations, \(parameters.opsLimit) passes over "
                + "\(parameters.memLimitBytes >> 20) MiB; \(cores) cores, at most \(max(1, cores - 1)) running at once"
        )
        // One untimed derivation first, so neither phase pays for the first allocation of 64 MiB.
        _ = try await Argon2id.deriveKey(password: "warm-up", parameters: parameters)

        let clock = ContinuousClock()
        let loadedStart = clock.now
        let loaded = try await Heartbeat.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<derivations {
                    group.addTask {
                        _ = try await Argon2id.deriveKey(password: "password \(index)", parameters: parameters)
                    }
                }
                try await group.waitForAll()
            }
        }
        let kdfTime = clock.now - loadedStart
        // The baseline beats for as long as the derivations took, so both phases see as many ticks.
        let baseline = try await Heartbeat.measure { try await Task.sleep(for: kdfTime) }

        print("")
        print("phase                        ticks   median gap   largest gap")
        print(row("no KDF running (baseline)", baseline))
        print(row("\(derivations) KDFs running", loaded))
        print("")
        print("the \(derivations) derivations took \(milliseconds(kdfTime))")
        print(
            "largest gap, KDFs over baseline: \(ratio(loaded.largest, baseline.largest)); "
                + "median gap: \(ratio(loaded.median, baseline.median))"
        )
    }

    static func row(_ name: String, _ gaps: Heartbeat.Gaps) -> String {
        name.padding(toLength: 27, withPad: " ", startingAt: 0)
            + String(gaps.count).leftPadded(to: 7)
            + milliseconds(gaps.median).leftPadded(to: 13)
            + milliseconds(gaps.largest).leftPadded(to: 14)
    }

    static func milliseconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) * 1e-15
        return String(format: "%.2f ms", value)
    }

    static func ratio(_ numerator: Duration, _ denominator: Duration) -> String {
        String(format: "%.1fx", numerator / denominator)
    }
}

/// A task on the cooperative pool that sleeps one tick at a time and keeps every gap between its wake-ups.
enum Heartbeat {
    struct Gaps {
        let count: Int
        let median: Duration
        let largest: Duration

        init(_ gaps: [Duration]) {
            let sorted = gaps.sorted()
            count = sorted.count
            median = sorted.isEmpty ? .zero : sorted[sorted.count / 2]
            largest = sorted.last ?? .zero
        }
    }

    /// The gaps the heartbeat saw while `work` ran.
    static func measure(while work: @Sendable () async throws -> Void) async throws -> Gaps {
        let clock = ContinuousClock()
        let heartbeat = Task {
            var gaps: [Duration] = []
            var last = clock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: HeartbeatBenchmark.tick)
                let now = clock.now
                gaps.append(now - last)
                last = now
            }
            return gaps
        }
        do {
            try await work()
        } catch {
            heartbeat.cancel()
            throw error
        }
        heartbeat.cancel()
        return Gaps(await heartbeat.value)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
