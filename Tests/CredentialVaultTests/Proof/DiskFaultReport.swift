/// What one disk fault came to: the write's outcome against the error expected, and whether the previous envelope
/// still opened.
struct DiskFaultReport {
    /// The fault, and how it was made on this machine.
    let fault: String
    let mechanism: String
    let outcome: DiskFaultHarness.Outcome
    /// The kind the write must fail with, and words its description must contain (the problem, and the path).
    let expectedKind: String
    let expectedWords: [String]
    /// Nil when the previous envelope opened with the password and held the previous token; else why not.
    let previousEnvelopeRefusal: String?

    /// Whether the write failed with the expected kind and a description naming the problem.
    var isClearTypedError: Bool {
        guard case .failed(let kind, let description) = outcome, kind == expectedKind else { return false }
        return expectedWords.allSatisfy { description.contains($0) }
    }

    /// Every miss, in words.
    var misses: [String] {
        var misses: [String] = []
        if !isClearTypedError {
            misses.append("\(fault): expected \(expectedKind) naming \(expectedWords), got \(outcome)")
        }
        if let previousEnvelopeRefusal {
            misses.append("\(fault): the previous envelope no longer opens: \(previousEnvelopeRefusal)")
        }
        return misses
    }
}
