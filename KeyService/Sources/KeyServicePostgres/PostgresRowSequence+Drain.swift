import PostgresNIO

extension PostgresRowSequence {
    /// Reads the rows to their end without keeping them: the statement is done, and its connection free, only then.
    func drain() async throws {
        for try await _ in self {}
    }

    /// Reads the rows to their end and gives the first column of the first row, nil when there is no row.
    func firstValue<Value: PostgresDecodable & Sendable>(as type: Value.Type) async throws -> Value? {
        var first: Value?
        for try await value in decode(Value.self) where first == nil {
            first = value
        }
        return first
    }
}
