import Foundation

/// The record of wrong passwords in a row kept beside an envelope: `N` when this device has seen every attempt since
/// the key's count was last known to be 0, `N?` (at least N) when it has not.
struct AttemptCount: Sendable {
    let count: Int
    let isComplete: Bool

    init(count: Int, isComplete: Bool) {
        self.count = count
        self.isComplete = isComplete
    }

    /// Reads a record; text that is no count reads as an incomplete 0.
    init(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let incomplete = trimmed.hasSuffix("?")
        let number = Int(incomplete ? String(trimmed.dropLast()) : trimmed)
        count = max(0, number ?? 0)
        isComplete = !incomplete && number != nil
    }

    /// The record's text.
    var text: String { isComplete ? String(count) : "\(count)?" }
}
