import Foundation
import Testing
import VaultTestSupport

/// `credential-vault git-credential` and `setup-git` with Debian's git 2.39: `git credential fill` and a clone over
/// https, served by a running agent, no password typed; the protocol's other answers over the built binary.
@Suite(
    "git-credential: git gets the agent's token as its password, and the token is only on standard output",
    .tags(.cli)
)
struct GitCredentialTests {
    @Test("setup-git writes the helper for the host; `git credential fill` gets username oauth2 and the token")
    func fill() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                let setup = try await Self.setupGit(sandbox, host: "git.example")
                #expect(setup.status == 0, "\(setup.stderr)")
                #expect(setup.stdout.isEmpty)
                let config = try String(
                    contentsOf: sandbox.root.appending(path: "home/.gitconfig"),
                    encoding: .utf8
                )
                #expect(config.contains("[credential \"https://git.example\"]"), "\(config)")
                #expect(config.contains("git-credential"), "\(config)")

                let fill = try await Self.runGit(
                    sandbox,
                    ["credential", "fill"],
                    stdin: "protocol=https\nhost=git.example\n\n"
                )
                #expect(fill.status == 0, "\(fill.stderr)")
                let named = fill.stdout.split(separator: "\n").contains("username=oauth2")
                #expect(named, "keys: \(Self.keys(fill.stdout))")
                // A Bool, so a failure prints no token.
                let answersToken = fill.stdout.split(separator: "\n").contains("password=\(token)")
                #expect(answersToken, "git credential fill's password is the agent's token")
                #expect(!fill.stderr.contains(token))

                let other = try await Self.runGit(
                    sandbox,
                    ["credential", "fill"],
                    stdin: "protocol=https\nhost=other.example\n\n"
                )
                #expect(!other.stdout.contains(token), "another host is not given the token")
                try Self.expectNoFileHolds(token, in: sandbox.root)
            }
        }
    }

    @Test("`git clone` over https from a server that takes the token as the password: no password typed")
    func clone() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            let repositories = try await Self.bareRepository(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                try await BearerServer.with(mode: "git", token: token, in: sandbox.root, root: repositories) {
                    server in
                    let host = "127.0.0.1:\(server.port)"
                    let anonymous = try await Self.runGit(sandbox, ["clone", "-q", "https://\(host)/project.git", "x"])
                    #expect(anonymous.status != 0, "without the helper the server refuses: \(anonymous.stderr)")

                    try await Self.expectHelperClone(sandbox, host: host, token: token)
                }
                try Self.expectNoFileHolds(token, in: sandbox.root)
            }
        }
    }

    @Test("`git clone` over https through nginx, fcgiwrap and git http-backend, as a git server is deployed")
    func cloneThroughNginx() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.fcgiwrap),
            "fcgiwrap is installed (make test-deps: APT_TEST_PACKAGES)"
        )
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            let repositories = try await Self.bareRepository(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                let port = Int(try FreePort.pick())
                // The token's Basic value is in nginx's configuration, in nginx's own temporary directory (removed
                // when it stops): the test server's, not the helper's.
                let basic = Data("oauth2:\(token)".utf8).base64EncodedString()
                let nginx = try await NginxProcess.start(port: port) { directory in
                    let (certificate, key) = try TestCertificateAuthority.shared.writeServerFiles(in: directory)
                    return Self.nginxConfiguration(
                        port: port,
                        certificate: certificate.path,
                        key: key.path,
                        directory: directory.path,
                        basic: basic,
                        repositories: repositories.path
                    )
                }
                defer { nginx.stop() }
                let socket = nginx.directory.appending(path: "fcgiwrap.sock").path
                try await TestProcess.with(
                    ["/bin/sh", "-c", "umask 000; exec \(Self.fcgiwrap) -c 2 -s unix:\(socket)"],
                    output: .none,
                    error: .none
                ) { _ in
                    for _ in 0..<300 where !FileManager.default.fileExists(atPath: socket) {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    let host = "127.0.0.1:\(port)"
                    try await Self.expectHelperClone(sandbox, host: host, token: token)
                }
                try Self.expectNoFileHolds(token, in: sandbox.root)
            }
        }
    }

    @Test("get offers Bearer where git offers authtype; plain http, store and erase give nothing on standard output")
    func protocolAnswers() async throws {
        try await withSandbox { sandbox in
            try await AgentTests.register(sandbox)
            try await AgentTests.withAgent(sandbox) { _ in
                let token = try await TokenFreshnessCLITests.token(sandbox, [])
                let bearer = try await sandbox.run(
                    ["git-credential", "get"],
                    stdin: "capability[]=authtype\nprotocol=https\nhost=git.example\n\n"
                )
                #expect(bearer.status == 0, "\(bearer.stderr)")
                let lines = bearer.stdout.split(separator: "\n").map(String.init)
                #expect(lines.contains("capability[]=authtype"))
                #expect(lines.contains("authtype=Bearer"))
                let carriesToken = lines.contains("credential=\(token)")
                #expect(carriesToken, "the credential line carries the agent's token")
                #expect(lines.contains { $0.hasPrefix("password_expiry_utc=") && Int($0.dropFirst(20)) != nil })

                let named = try await sandbox.run(
                    ["git-credential", "--username", "x-access-token", "get"],
                    stdin: "protocol=https\nhost=git.example\n"
                )
                #expect(named.stdout.split(separator: "\n").contains("username=x-access-token"), "\(named.stderr)")

                // Plain http only to a loopback IP literal, by the library's one rule: a name that merely starts
                // like one, or `localhost`, is refused.
                let hosts = ["git.example", "127.0.0.1.attacker.example", "127.0.0.1.attacker.example:80", "localhost"]
                for host in hosts {
                    let plain = try await sandbox.run(
                        ["git-credential", "get"],
                        stdin: "protocol=http\nhost=\(host)\n\n"
                    )
                    #expect(plain.status != 0, "\(host)")
                    #expect(plain.stdout.isEmpty, "\(host)")
                    #expect(plain.stderr.contains("https"), "\(host): \(plain.stderr)")
                }

                for operation in ["store", "erase"] {
                    let result = try await sandbox.run(
                        ["git-credential", operation],
                        stdin: "protocol=https\nhost=git.example\nusername=oauth2\npassword=\(token)\n\n"
                    )
                    #expect(result.status == 0, "\(operation): \(result.stderr)")
                    #expect(result.stdout.isEmpty, "\(operation)")
                    #expect(!result.stderr.contains(token))
                }
            }
        }
    }

    /// `repositories/project.git` in the sandbox: a bare repository with one commit, "first commit".
    static func bareRepository(_ sandbox: CLISandbox) async throws -> URL {
        let repositories = sandbox.root.appending(path: "repositories")
        try FileManager.default.createDirectory(at: repositories, withIntermediateDirectories: true)
        let made = try await runGit(
            sandbox,
            [],
            shell: """
                git init -q work && git -C work -c user.name=test -c user.email=test@example.com \
                commit -q --allow-empty -m 'first commit' && git clone -q --bare work repositories/project.git
                """
        )
        try #require(made.status == 0, "\(made.stderr)")
        return repositories
    }

    /// `setup-git` for `host`, then a `git clone` of `https://host/project.git` with no password typed: the clone
    /// has the first commit, and git's standard error never shows the token.
    static func expectHelperClone(_ sandbox: CLISandbox, host: String, token: String) async throws {
        let setup = try await setupGit(sandbox, host: host)
        #expect(setup.status == 0, "\(setup.stderr)")
        let clone = try await runGit(sandbox, ["clone", "-q", "https://\(host)/project.git", "cloned"])
        #expect(clone.status == 0, "\(clone.stderr)")
        let log = try await runGit(sandbox, ["-C", "cloned", "log", "--format=%s"])
        #expect(log.stdout == "first commit\n", "\(log.stderr)")
        let showsToken = clone.stderr.contains(token)
        #expect(!showsToken, "git's standard error shows the token")
    }

    /// The keys of git's `key=value` lines, without their values (a failure message never shows the token).
    static func keys(_ output: String) -> [Substring] {
        output.split(separator: "\n").map { $0.prefix { $0 != "=" } }
    }

    @Test("setup-git --dry-run prints the two git config commands and changes nothing")
    func dryRun() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let result = try await sandbox.run(["setup-git", "--host", "git.example:8443", "--dry-run"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first == "git config --global --replace-all credential.https://git.example:8443.helper ''")
            #expect(
                lines.last?.hasSuffix(" git-credential'") == true || lines.last?.hasSuffix(" git-credential") == true
            )
            #expect(!FileManager.default.fileExists(atPath: sandbox.root.appending(path: "home/.gitconfig").path))
            let bad = try await sandbox.run(["setup-git", "--host", "https://git.example/", "--dry-run"])
            #expect(bad.status == 64)
        }
    }

    // MARK: Helpers

    static let fcgiwrap = "/usr/sbin/fcgiwrap"

    /// nginx in front of `git http-backend` (through fcgiwrap), answering 401 with a Basic challenge unless the request
    /// carries `basic` (base64 of `oauth2:TOKEN`), as git 2.39 sends a helper's token.
    static func nginxConfiguration(
        port: Int,
        certificate: String,
        key: String,
        directory: String,
        basic: String,
        repositories: String
    ) -> String {
        """
        worker_processes 1;
        events { worker_connections 64; }
        http {
            access_log \(directory)/access.log;
            client_body_temp_path \(directory)/client_body;
            proxy_temp_path \(directory)/proxy;
            fastcgi_temp_path \(directory)/fastcgi;
            uwsgi_temp_path \(directory)/uwsgi;
            scgi_temp_path \(directory)/scgi;
            server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(certificate);
                ssl_certificate_key \(key);
                location / {
                    if ($http_authorization != "Basic \(basic)") {
                        add_header WWW-Authenticate 'Basic realm="git"' always;
                        return 401;
                    }
                    fastcgi_pass unix:\(directory)/fcgiwrap.sock;
                    fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
                    fastcgi_param GIT_PROJECT_ROOT \(repositories);
                    fastcgi_param GIT_HTTP_EXPORT_ALL 1;
                    fastcgi_param GIT_CONFIG_NOSYSTEM 1;
                    fastcgi_param HOME \(repositories);
                    fastcgi_param PATH_INFO $uri;
                    fastcgi_param QUERY_STRING $args;
                    fastcgi_param REQUEST_METHOD $request_method;
                    fastcgi_param CONTENT_TYPE $content_type;
                    fastcgi_param CONTENT_LENGTH $content_length;
                    fastcgi_param REMOTE_USER oauth2;
                    fastcgi_param GIT_PROTOCOL $http_git_protocol;
                }
            }
        }

        """
    }

    /// What a test adds for git: no system configuration (this machine's names a credential helper), no prompt.
    static let git = ["GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"]

    /// `credential-vault setup-git --host HOST` in the sandbox's home (created first: git writes ~/.gitconfig there).
    static func setupGit(_ sandbox: CLISandbox, host: String) async throws -> CLIResult {
        try FileManager.default.createDirectory(
            at: sandbox.root.appending(path: "home"),
            withIntermediateDirectories: true
        )
        return try await sandbox.run(["setup-git", "--host", host], environment: git)
    }

    /// Runs git with the sandbox's environment (its private HOME, no inherited GIT_* variable) trusting the test
    /// authority; with `shell`, runs that shell text instead.
    static func runGit(
        _ sandbox: CLISandbox,
        _ arguments: [String],
        stdin: String = "",
        shell: String? = nil
    ) async throws -> CLIResult {
        var environment = sandbox.environment.merging(git) { $1 }
        environment["GIT_SSL_CAINFO"] = sandbox.environment["CREDENTIAL_VAULT_CA_FILE"]
        return try await CLISandbox.run(
            executable: URL(fileURLWithPath: shell == nil ? "/usr/bin/git" : "/bin/sh"),
            arguments: shell.map { ["-c", $0] } ?? arguments,
            stdin: stdin,
            environment: environment,
            in: sandbox.root
        )
    }

    /// No file under `root` holds `token`, but the captured standard outputs of the runs (`out-*`), where it belongs.
    static func expectNoFileHolds(_ token: String, in root: URL) throws {
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        let needle = Data(token.utf8)
        var checked = 0
        while let url = files?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
                !url.lastPathComponent.hasPrefix("out-")
            else { continue }
            let data = (try? Data(contentsOf: url)) ?? Data()
            #expect(data.range(of: needle) == nil, "the token is in \(url.path)")
            checked += 1
        }
        #expect(checked > 0)
    }
}
