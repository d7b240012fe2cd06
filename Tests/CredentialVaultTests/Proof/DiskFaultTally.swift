/// The disk-fault suite's figures over its reports, and its figure line.
struct DiskFaultTally {
    let reports: [DiskFaultReport]

    var clearTypedErrors: Int { reports.filter(\.isClearTypedError).count }
    var previousEnvelopesLost: Int { reports.filter { $0.previousEnvelopeRefusal != nil }.count }
    var misses: [String] { reports.flatMap(\.misses) }

    /// `PROOF disk: ...`, the line a CI log reader greps; it names how each fault was made here.
    var figureLine: String {
        "PROOF disk: \(reports.count) faults, \(clearTypedErrors) clear typed errors, "
            + "\(previousEnvelopesLost) previous envelopes lost, \(misses.count) misses ("
            + reports.map { "\($0.fault): \($0.mechanism)" }.joined(separator: "; ") + ")"
    }
}
