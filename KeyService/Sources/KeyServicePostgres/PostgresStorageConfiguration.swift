public import Foundation
import KeyServiceCore
import PostgresNIO
import VaultPOSIX

/// Where the PostgreSQL storage connects and how: read from a `postgres://` URL.
///
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`. Without a password in the
/// URL, the environment's `PGPASSWORD` is used (so the password need not appear in a process list). The
/// description never shows the password. Without `sslmode`, a database on loopback (`127.0.0.0/8`, `::1`,
/// `localhost`) is `prefer` and any other is `require`: a database across a network is never reached over a
/// connection that someone in the middle could have stripped of TLS.
public struct PostgresStorageConfiguration: Sendable, CustomStringConvertible {
    /// How the connection is protected.
    public enum TLSMode: String, Sendable {
        /// Plain TCP: for a database on loopback or a private network only.
        case disable
        /// TLS when the server offers it, plain TCP when not: the default for a database on loopback only.
        case prefer
        /// TLS, with the server's certificate verified against the system's trust roots: the default for a
        /// database that is not on loopback.
        case require
    }

    /// The database server's host name or address.
    public var host: String
    /// Its port.
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if it needs one.
    public var password: String?
    /// The database's name.
    public var database: String
    /// How the connection is protected.
    public var tls: TLSMode
    /// The most connections this instance keeps open: each instance is one pool of its own.
    public var maximumConnections = 20
    /// The longest any one storage call may take, waiting for a connection included; past it the call throws
    /// (the key service answers 503 and checks nothing). The database ends a statement running as long
    /// (`statement_timeout`) and a session idle inside a transaction as long (`idle_in_transaction_session_timeout`).
    public var deadline: Duration = .seconds(5)

    /// The longest the schema's migration at start may take, waiting behind other instances' included: the
    /// ``deadline``, but at least a minute (each statement of it still has the ``deadline``).
    public var migrationDeadline: Duration { max(deadline, .seconds(60)) }

    /// A configuration with every part given.
    public init(host: String, port: Int, username: String, password: String?, database: String, tls: TLSMode) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Reads `url` (`postgres://` or `postgresql://`); `environment` supplies `PGPASSWORD` when the URL has none.
    /// - Throws: ``PostgresStorageError`` (``PostgresStorageError/Kind/invalidConfiguration``) naming what is wrong.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func invalid(_ reason: String) -> PostgresStorageError {
            PostgresStorageError(
                .invalidConfiguration,
                "the database URL cannot be used: \(reason) "
                    + "(expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require])"
            )
        }
        guard let parts = URLComponents(string: text) else { throw invalid("it is not a URL") }
        guard parts.scheme == "postgres" || parts.scheme == "postgresql" else {
            throw invalid("its scheme is not postgres")
        }
        guard let host = parts.host, !host.isEmpty else { throw invalid("it names no host") }
        guard let user = parts.user, !user.isEmpty else { throw invalid("it names no user") }
        let name = String(parts.path.drop(while: { $0 == "/" }))
        guard !name.isEmpty, !name.contains("/") else { throw invalid("it names no database") }
        let port = parts.port ?? 5432
        guard (1...65_535).contains(port) else { throw invalid("its port is out of range") }
        var tls = Self.defaultTLS(host: host)
        for item in parts.queryItems ?? [] {
            guard item.name == "sslmode" else { throw invalid("it has an unknown parameter \(item.name)") }
            guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                throw invalid("its sslmode is not disable, prefer or require")
            }
            tls = mode
        }
        self.init(
            host: host,
            port: port,
            username: user,
            password: parts.password ?? environment["PGPASSWORD"],
            database: name,
            tls: tls
        )
    }

    /// The mode when the URL names none: `prefer` on loopback, `require` anywhere else.
    static func defaultTLS(host: String) -> TLSMode {
        host.lowercased() == "localhost" || Loopback.isAddress(host) ? .prefer : .require
    }

    /// `postgres://USER@HOST:PORT/DATABASE?sslmode=MODE`, without the password.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    /// The client configuration postgres-nio takes.
    var client: PostgresClient.Configuration {
        let clientTLS: PostgresClient.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: clientTLS
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = deadline
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// The session parameters every connection starts with.
    ///
    /// A connection that stalls inside a transaction (an instance frozen between counting and committing) must not
    /// hold a key's row lock for longer than a call may take: the database ends such a session, and its attempt stays
    /// uncounted. A statement still running at the deadline is ended by the database too: its caller has answered 503
    /// already (withDeadline), and nothing should go on holding a connection and a row lock for it. Both are the
    /// deadline: a session idle inside a transaction for less than that is a call still within its time, not a frozen
    /// instance. The migration at start gives its transaction the migration's deadline instead (`PostgresMigrations`).
    var startupParameters: [(String, String)] {
        let deadlineMilliseconds = String(Self.milliseconds(deadline))
        return [
            ("application_name", "keyservice"),
            ("idle_in_transaction_session_timeout", deadlineMilliseconds),
            ("statement_timeout", deadlineMilliseconds),
        ]
    }

    /// `duration` as PostgreSQL's timeout settings take it: whole milliseconds, rounded up, at least 1 (0 would turn
    /// the limit off).
    static func milliseconds(_ duration: Duration) -> Int32 {
        max(Poll.milliseconds(duration), 1)
    }
}
