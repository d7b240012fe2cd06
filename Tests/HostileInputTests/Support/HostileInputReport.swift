import Foundation

/// One input a parser failed on, with what replays it.
struct HostileInputFailure: Sendable, CustomStringConvertible {
    enum Kind: String, Sendable {
        case untypedError = "untyped error"
        case violation = "property violation"
        case hang
    }

    let kind: Kind
    let index: Int
    let seed: String
    let detail: String
    /// The input, escaped and cut (``HostileBytes/describe(_:)``).
    let input: String
    let replay: String

    var description: String {
        "\(kind.rawValue) on input #\(index) (seed \(seed)): \(detail)\n  input: \(input)\n  replay: \(replay)"
    }
}

/// The tallies of one run and its figure line.
struct HostileInputReport: Sendable {
    /// The most failures kept for the report; all are counted.
    static let keptFailures = 5

    let parser: String
    let label: String
    let runSeed: String
    var inputs = 0
    var accepted = 0
    var refused = 0
    var untypedErrors = 0
    var violations = 0
    var hangs = 0
    var failures: [HostileInputFailure] = []
    var elapsed = Duration.zero

    var failed: Bool { untypedErrors + violations + hangs > 0 }

    mutating func record(_ failure: HostileInputFailure) {
        switch failure.kind {
        case .untypedError: untypedErrors += 1
        case .violation: violations += 1
        case .hang: hangs += 1
        }
        if failures.count < Self.keptFailures {
            failures.append(failure)
            print("\(label) fuzz: FAILURE \(parser): \(failure)")
        }
    }

    /// `PROOF fuzz: jwt 100000 inputs, 0 crashes, 0 untyped errors, 0 hangs, 0 violations (...)`. A crash ends the
    /// process before this line is printed, so a printed line always says 0 crashes.
    var figureLine: String {
        let seconds = String(format: "%.1f", HangWatchdog.seconds(elapsed))
        return "\(label) fuzz: \(parser) \(inputs) inputs, 0 crashes, \(untypedErrors) untyped errors, \(hangs) hangs, "
            + "\(violations) property violations (\(refused) refused with a typed error, \(accepted) accepted; "
            + "run seed \(runSeed); \(seconds) s)"
    }
}
