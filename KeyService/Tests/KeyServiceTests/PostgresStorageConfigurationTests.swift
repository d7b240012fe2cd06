import Foundation
import Testing

@testable import KeyServicePostgres

/// What the storage asks of the database, from its deadline.
@Suite("PostgreSQL storage configuration")
struct PostgresStorageConfigurationTests {
    static func configuration(deadline: Duration) -> PostgresStorageConfiguration {
        var configuration = PostgresStorageConfiguration(
            host: "127.0.0.1",
            port: 5432,
            username: "keyservice",
            password: nil,
            database: "keyservice",
            tls: .disable
        )
        configuration.deadline = deadline
        return configuration
    }

    @Test(
        "a statement and a session idle inside a transaction are ended at the deadline, not before",
        arguments: [(Duration.seconds(5), "5000"), (.seconds(60), "60000"), (.milliseconds(250), "250")]
    )
    func sessionLimits(deadline: Duration, milliseconds: String) {
        let parameters = Self.configuration(deadline: deadline).startupParameters
        let limits = Dictionary(parameters, uniquingKeysWith: { first, _ in first })
        #expect(limits["statement_timeout"] == milliseconds)
        // A busy machine's migration idles between its statements; a fixed 5 s ended it under a 60 s deadline.
        #expect(limits["idle_in_transaction_session_timeout"] == milliseconds)
    }

    @Test("the migration's deadline is the call's, but at least a minute")
    func migrationDeadline() {
        #expect(Self.configuration(deadline: .seconds(5)).migrationDeadline == .seconds(60))
        #expect(Self.configuration(deadline: .seconds(90)).migrationDeadline == .seconds(90))
    }
}
