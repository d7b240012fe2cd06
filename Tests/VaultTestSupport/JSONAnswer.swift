/// An answer of a test target's HTTP client: its status and the string fields of a JSON object body
/// (``KeyServiceV2Client``).
public protocol JSONAnswer: Sendable {
    /// The HTTP status.
    var status: Int { get }
    /// A string field of a JSON object body, nil when absent or the body is not one.
    func string(_ field: String) -> String?
}
