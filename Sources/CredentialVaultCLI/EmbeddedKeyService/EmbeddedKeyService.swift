import CredentialVault
import Foundation
import VaultPOSIX

/// The embedded default: the package's `keyservice-mock` run as a child process when no issuer is configured
/// (``KeyServiceMockProcess``: `credential-vault` links no server).
///
/// Its state (keys, lock counts, refresh-token families, signing key) lives in SQLite under
/// `$XDG_STATE_HOME/credential-vault/keyservice-mock`, and its port is chosen on first use and remembered
/// there, so the issuer URL, and with it every stored login, stays valid from run to run.
struct EmbeddedKeyService {
    /// The realm of the embedded issuer.
    static let realm = "demo"

    let server: KeyServiceMockProcess
    private let lock: AdvisoryLock

    /// Starts the server; waits (up to a minute) while another `credential-vault` process uses it.
    static func start(
        clientId: String,
        redirectURI: String,
        environment: [String: String]
    ) async throws -> EmbeddedKeyService {
        let root = Paths.embeddedRoot(environment: environment)
        let state = Paths.embeddedKeyServiceState(environment: environment)
        do {
            try FileManager.default.createDirectory(
                at: root,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CLIError.other("cannot create \(root.path): \(error.localizedDescription)")
        }
        let lock = try await acquireLock(root.appending(path: "embedded.lock").path)
        do {
            let portFile = root.appending(path: "keyservice-mock.port")
            let remembered = rememberedPort(environment: environment)
            let server: KeyServiceMockProcess
            do {
                server = try await KeyServiceMockProcess.start(
                    realm: realm,
                    arguments: [
                        "--port", "\(remembered ?? 0)", "--state-dir", state.path, "--client",
                        "\(clientId)=\(redirectURI)",
                    ]
                )
            } catch {
                if let remembered {
                    throw CLIError(
                        status: .unavailable,
                        description: "the embedded key service cannot listen on 127.0.0.1:\(remembered), the port "
                            + "it remembers (\(error)). Free the port, or remove \(portFile.path) to pick a new one "
                            + "(logins stored with the old port then need `credential-vault register`)."
                    )
                }
                throw error
            }
            if remembered == nil, let port = server.baseURL.port {
                try? Data("\(port)\n".utf8).write(to: portFile, options: .atomic)
            }
            return EmbeddedKeyService(server: server, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    /// The embedded issuer as it will be on the next start: its remembered port, or port 0 before first use.
    static func rememberedIssuer(environment: [String: String]) -> URL {
        let port = rememberedPort(environment: environment) ?? 0
        return TIMLayout.issuer(server: URL(string: "http://127.0.0.1:\(port)")!, realm: realm)
    }

    /// The port chosen on first use, if there was one.
    static func rememberedPort(environment: [String: String]) -> Int? {
        let portFile = Paths.embeddedRoot(environment: environment).appending(path: "keyservice-mock.port")
        return (try? String(contentsOf: portFile, encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Stops the server and lets the next `credential-vault` process have it.
    func stop() async {
        await server.stop()
        lock.release()
    }

    /// One process at a time runs the embedded server on its state directory: a second `credential-vault` waits here.
    private static func acquireLock(_ path: String) async throws -> AdvisoryLock {
        do {
            return try await AdvisoryLock.acquire(path: path, timeout: .seconds(60)) {
                Terminal.note(
                    "credential-vault: waiting for another credential-vault command that uses the embedded key service"
                )
            }
        } catch {
            guard error.isLockTimeout else { throw error }
            throw VaultError(
                .lockTimeout,
                reason: "Another credential-vault command has used the embedded key service for a minute; try again."
            )
        }
    }
}
