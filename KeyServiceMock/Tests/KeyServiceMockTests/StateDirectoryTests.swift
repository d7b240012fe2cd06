import Foundation
import KeyServiceMock
import Testing
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The bytes of every file in `directory` but the two secret files: what a copy of the database gives.
private func databaseBytes(in directory: URL) throws -> Data {
    var everything = Data()
    for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
    where name != "pepper" && name != "signing-key" {
        everything.append(try Data(contentsOf: directory.appendingPathComponent(name)))
    }
    return everything
}

private func mode(of url: URL) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
}

/// Starts a server on `directory` and expects it to refuse, with a message containing each of `phrases`.
private func expectRefusal(
    _ directory: URL,
    _ phrases: [String],
    sourceLocation: SourceLocation = #_sourceLocation
)
    async
{
    var configuration = KeyServiceMockConfiguration()
    configuration.stateDirectory = directory
    let error = await #expect(throws: KeyServiceMockError.self, sourceLocation: sourceLocation) {
        try await KeyServiceMockServer.withServer(configuration) { _ in }
    }
    for phrase in phrases {
        #expect(
            error?.description.contains(phrase) == true,
            "\(error?.description ?? "")",
            sourceLocation: sourceLocation
        )
    }
}

@Suite("State directory: permissions, secrets beside the database, ids as keyed hashes")
struct StateDirectoryTests {
    let http = HTTPClient()

    private func configuration(_ directory: URL) -> KeyServiceMockConfiguration {
        var configuration = KeyServiceMockConfiguration()
        configuration.stateDirectory = directory
        return configuration
    }

    @Test("a new state directory is 0700, and its pepper and signing key are 32-byte 0600 files")
    func newDirectory() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("state")
        try await KeyServiceMockServer.withServer(configuration(directory)) { _ in }
        #expect(try mode(of: directory) == 0o700)
        for name in ["pepper", "signing-key"] {
            let file = directory.appendingPathComponent(name)
            #expect(try mode(of: file) == 0o600, "\(name)")
            #expect(try Data(contentsOf: file).count == 32, "\(name)")
        }
    }

    @Test("a state directory others may enter is refused at every start, naming the chmod that fixes it")
    func permissionsChecked() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            try await KeyServiceCalls(base: server.keyServiceURL, http: http).newKey(secret: "s3cret")
        }
        for mode in [0o755, 0o750, 0o711, 0o777, 0o701, 0o500] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: directory.path)
            await expectRefusal(
                directory,
                [
                    "the state directory \(directory.path) has mode \(String(mode, radix: 8))",
                    "chmod 700 \(directory.path)",
                ]
            )
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            let answer = try await KeyServiceCalls(base: server.keyServiceURL, http: http).key(
                created.keyId,
                secret: "s3cret"
            )
            #expect(answer.status == 200)
        }
    }

    @Test("a state directory that belongs to another user is refused", .enabled(if: geteuid() == 0))
    func otherOwner() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try #require(chown(directory.path, 54_321, 54_321) == 0)
        await expectRefusal(directory, ["the state directory \(directory.path) belongs to uid 54321, not to this user"])
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("pepper").path))
    }

    @Test("a pepper that cannot be read, or is not 32 bytes, stops the server and is left as it was")
    func pepperNeverReplaced() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            try await KeyServiceCalls(base: server.keyServiceURL, http: http).newKey(secret: "s3cret")
        }
        let pepper = directory.appendingPathComponent("pepper")
        let original = try Data(contentsOf: pepper)
        let aside = directory.appendingPathComponent("pepper.aside")
        try FileManager.default.moveItem(at: pepper, to: aside)

        // Unreadable: a directory, a link to nothing.
        try FileManager.default.createDirectory(at: pepper, withIntermediateDirectories: false)
        await expectRefusal(directory, ["cannot read the pepper file \(pepper.path)", "it is not replaced"])
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: pepper.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        try FileManager.default.removeItem(at: pepper)
        try FileManager.default.createSymbolicLink(atPath: pepper.path, withDestinationPath: "/nonexistent/pepper")
        await expectRefusal(directory, ["cannot read the pepper file \(pepper.path)"])
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: pepper.path) == "/nonexistent/pepper",
            "the link is still there"
        )
        try FileManager.default.removeItem(at: pepper)

        // Damaged: too short, too long.
        for damaged in [original.prefix(5), original + Data([0])] {
            try damaged.write(to: pepper)
            await expectRefusal(directory, ["the pepper file \(pepper.path) is not 32 bytes", "it is not replaced"])
            #expect(try Data(contentsOf: pepper) == damaged)
        }
        try FileManager.default.removeItem(at: pepper)

        // Missing, beside a database that needs it.
        await expectRefusal(directory, ["the pepper file \(pepper.path) is missing", "every stored key"])
        #expect(!FileManager.default.fileExists(atPath: pepper.path))

        try FileManager.default.moveItem(at: aside, to: pepper)
        try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            let answer = try await KeyServiceCalls(base: server.keyServiceURL, http: http).key(
                created.keyId,
                secret: "s3cret"
            )
            #expect(answer.status == 200, "the key opens again with its own pepper")
        }
    }

    @Test("a signing key missing beside a database that has issued tokens stops the server and is not replaced")
    func signingKeyNeverReplaced() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await KeyServiceMockServer.withServer(configuration(directory)) { _ in }
        let seed = directory.appendingPathComponent("signing-key")
        try FileManager.default.removeItem(at: seed)
        await expectRefusal(directory, ["the signing key file \(seed.path) is missing"])
        #expect(!FileManager.default.fileExists(atPath: seed.path))
    }

    @Test("the signing key is the seed in its file, and no copy of the seed is in the database")
    func seedBesidePepper() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let x = try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            let client = OIDCClient(server: server, http: http)
            _ = try await client.tokens()
            return try await http.get(client.url("certs")).json.objects("keys").first?.string("x")
        }
        let seed = try Data(contentsOf: directory.appendingPathComponent("signing-key"))
        #expect(Base64URL.encode(try Ed25519SigningKey(seed: SecureBytes(seed)).publicKey) == x)
        #expect(try databaseBytes(in: directory).range(of: seed) == nil)
    }

    @Test("session ids, refresh-token ids and codes are kept as keyed hashes, never in clear")
    func idsHashed() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var clear: [String] = []
        try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let first = try await client.tokens()
            let refreshed = try await client.refresh(try #require(first.string("refresh_token")))
            #expect(refreshed.status == 200)
            let (code, verifier) = try await client.code()
            let exchanged = try await client.exchange(code: code, verifier: verifier)
            #expect(exchanged.status == 200)
            clear.append(code)
            for answer in [first, refreshed.json, exchanged.json] {
                let refreshClaims = try claims(of: try #require(answer.string("refresh_token")))
                clear += [
                    try #require(refreshClaims.string("jti")), try #require(refreshClaims.string("sid")),
                    try #require(answer.string("session_state")),
                ]
            }
        }
        let bytes = try databaseBytes(in: directory)
        for id in clear {
            #expect(bytes.range(of: Data(id.utf8)) == nil, "\(id) is in the database")
        }
    }

    @Test("a state directory of the previous version is migrated: the seed moves to its file, ids are hashed")
    func migratesPreviousVersion() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let seed = SecureRandom.bytes(count: 32)
        try SecureRandom.bytes(count: 32).write(to: directory.appendingPathComponent("pepper"))
        // The previous version's schema, as its v1 migration made it, with one login and one locked key.
        try await runPython(
            """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript('''
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1');
                CREATE TABLE key (keyid TEXT PRIMARY KEY NOT NULL, key BLOB NOT NULL, secret_verifier BLOB NOT NULL,
                    longsecret_verifier BLOB NOT NULL, sealed_longsecret BLOB NOT NULL,
                    failures INTEGER NOT NULL DEFAULT 0, locked INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);
                CREATE TABLE signing_key (id INTEGER PRIMARY KEY CHECK (id = 1), seed BLOB NOT NULL);
                CREATE TABLE refresh_family (id TEXT PRIMARY KEY NOT NULL, subject TEXT NOT NULL,
                    username TEXT NOT NULL, client_id TEXT NOT NULL, scope TEXT NOT NULL,
                    login_provider TEXT NOT NULL, auth_time REAL NOT NULL, current_jti TEXT NOT NULL,
                    revoked INTEGER NOT NULL DEFAULT 0);
                INSERT INTO refresh_family VALUES ('old-session-id', 'old-subject', 'demo', 'vault', 'openid',
                    'password', 1700000000, 'old-refresh-token-id', 0);
                INSERT INTO key VALUES ('old-locked-key', zeroblob(32), zeroblob(32), zeroblob(32), zeroblob(32),
                    3, 1, 1700000000);
            ''')
            db.execute("INSERT INTO signing_key VALUES (1, ?)", (bytes.fromhex(sys.argv[2]),))
            db.commit()
            """,
            arguments: [
                directory.appendingPathComponent("state.sqlite").path, seed.map { String(format: "%02x", $0) }.joined(),
            ]
        )
        let signingKey = try Ed25519SigningKey(seed: SecureBytes(seed))
        try await KeyServiceMockServer.withServer(configuration(directory)) { server async throws in
            let client = OIDCClient(server: server, http: http)
            let jwk = try #require(try await http.get(client.url("certs")).json.objects("keys").first)
            #expect(jwk.string("x") == Base64URL.encode(signingKey.publicKey), "the same signing key")
            let old = try refreshToken(
                signedBy: signingKey,
                kid: try #require(jwk.string("kid")),
                issuer: server.issuer.absoluteString,
                sessionId: "old-session-id",
                tokenId: "old-refresh-token-id"
            )
            let rotated = try await client.refresh(old)
            #expect(rotated.status == 200, "the login of the previous version still refreshes")
            #expect(try claims(of: try #require(rotated.string("refresh_token"))).string("sub") == "old-subject")
            #expect(try await client.refresh(old).string("error") == "invalid_grant", "reuse is still detected")
            let calls = KeyServiceCalls(base: server.keyServiceURL, http: http)
            #expect(try await calls.key("old-locked-key", secret: "anything").status == 204)
        }
        #expect(try Data(contentsOf: directory.appendingPathComponent("signing-key")) == seed)
        #expect(try mode(of: directory.appendingPathComponent("signing-key")) == 0o600)
        let bytes = try databaseBytes(in: directory)
        #expect(bytes.range(of: seed) == nil, "no copy of the seed is left in the database")
        for id in ["old-session-id", "old-refresh-token-id"] {
            #expect(bytes.range(of: Data(id.utf8)) == nil, "\(id) is in the database")
        }
        // And the migrated directory starts again as it is.
        try await KeyServiceMockServer.withServer(configuration(directory)) { _ in }
    }

    /// A refresh token as the provider signs them (header byte for byte), for a login made before a migration.
    private func refreshToken(
        signedBy key: Ed25519SigningKey,
        kid: String,
        issuer: String,
        sessionId: String,
        tokenId: String
    ) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = Base64URL.encode(Data(#"{"alg":"EdDSA","kid":"\#(kid)","typ":"JWT"}"#.utf8))
        let claims: [String: Any] = [
            "typ": "Refresh", "iss": issuer, "sub": "old-subject", "aud": "vault", "azp": "vault", "exp": now + 3_600,
            "iat": now, "jti": tokenId, "scope": "openid", "login_provider": "password", "sid": sessionId,
            "family_id": sessionId,
        ]
        let payload = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = header + "." + payload
        return input + "." + Base64URL.encode(key.signature(for: Data(input.utf8)))
    }
}
