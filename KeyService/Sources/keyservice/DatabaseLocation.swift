import KeyServiceCore

/// A `--database` value: `sqlite:PATH` or a PostgreSQL URL.
enum DatabaseLocation: Equatable {
    case sqlite(path: String)
    /// `postgres://…` or `postgresql://…`, as given (it may hold a password: never print it).
    case postgres(url: String)

    /// Parses `text`.
    /// - Throws: ``KeyServiceError`` for anything else, in words.
    init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            // sqlite:///abs/path and sqlite://rel are accepted as sqlite:/abs/path and sqlite:rel.
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else {
                throw KeyServiceError("--database sqlite: needs a path: sqlite:/var/lib/keyservice/keys.sqlite")
            }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(url: text)
        } else {
            throw KeyServiceError("--database must be sqlite:PATH or postgres://USER@HOST:PORT/DATABASE")
        }
    }
}
