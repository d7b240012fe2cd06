import Foundation
import VaultPOSIX

/// Where the agent for one store directory and user listens: `agent-HASH.sock` in
/// `$XDG_RUNTIME_DIR/credential-vault` (else `/tmp/credential-vault-UID`), HASH a 64-bit FNV-1a hash of both and of
/// the issuer and client the login belongs to, so two configurations never share a socket (a name, not a secret: the directory and `SO_PEERCRED` guard the socket).
///
/// Without `XDG_RUNTIME_DIR`, another local user can create `/tmp/credential-vault-UID` first. That directory is
/// never used then: the sockets go to `$XDG_STATE_HOME/credential-vault/agent` (`~/.local/state/...`), which no one
/// else can take. The choice depends only on what is on disk, so the agent and its clients make the same one.
struct AgentAddress: Sendable {
    /// The directory of the agents' sockets: mode 0700, owned by this user.
    let directory: URL
    /// The socket's path.
    let socketPath: String
    /// Why the usual directory was passed over, when it was (`/tmp/credential-vault-UID` is not ours): said once
    /// when an agent starts.
    let fallbackReason: String?

    /// - Parameters:
    ///   - store: the store directory of the login.
    ///   - userId: the user the agent serves.
    ///   - binding: the server and client the login belongs to (``VaultContext/agentBinding``): two configurations
    ///     that share a store and a user but not an issuer never share an agent.
    ///   - environment: where `XDG_RUNTIME_DIR` and the state directory are read.
    init(store: URL, userId: String, binding: String, environment: [String: String]) {
        var reason: String?
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            directory = URL(fileURLWithPath: runtime, isDirectory: true).appending(path: "credential-vault")
        } else {
            let shared = "/tmp/credential-vault-\(getuid())"
            reason = Self.notOurs(shared)
            directory =
                reason == nil
                ? URL(fileURLWithPath: shared, isDirectory: true)
                : Paths.embeddedRoot(environment: environment).appending(path: "agent", directoryHint: .isDirectory)
        }
        fallbackReason = reason
        let key = store.standardizedFileURL.path + "\u{0}" + userId + "\u{0}" + binding
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let name = String(hash, radix: 16)
        socketPath =
            directory.appending(path: "agent-\(String(repeating: "0", count: 16 - name.count) + name).sock").path
    }

    /// Why `path` cannot be this user's socket directory (something that is not a directory, or that another user
    /// owns); nil when it is ours or not there yet (then it is created, 0700).
    private static func notOurs(_ path: String) -> String? {
        // FileStatus, not `stat` here: which module defines `struct stat` must not depend on the build (issue 21).
        guard let info = try? FileStatus(path: path, followingSymbolicLinks: false) else { return nil }
        if info.kind != .directory { return "\(path) is not a directory" }
        if info.owner != getuid() { return "\(path) belongs to uid \(info.owner), not to you" }
        return nil
    }

    /// Creates the directory (0700) or checks the one there: a directory another user owns, or one that others may
    /// enter, could hold a socket planted by someone else.
    func prepareDirectory() throws {
        if fallbackReason != nil {
            // The parent (the state directory) is the user's own; only the last component needs mode 0700.
            try? FileManager.default.createDirectory(
                at: directory.deletingLastPathComponent(),
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        if mkdir(directory.path, 0o700) != 0, errno != EEXIST {
            throw CLIError.other("cannot create \(directory.path): \(String(cString: strerror(errno)))")
        }
        try checkDirectory()
    }

    /// Refuses a directory that is a symlink, not ours, or open to others.
    func checkDirectory() throws {
        let info: FileStatus
        do {
            // lstat: the link itself, not where a symlink points. FileStatus, not FileManager: every command that asks
            // an agent checks this, and FileManager's attributes look up the owner's and group's names too.
            info = try FileStatus(path: directory.path, followingSymbolicLinks: false)
        } catch {
            throw CLIError.other("cannot read \(directory.path): \(String(cString: strerror(error.errorNumber)))")
        }
        guard info.kind == .directory else {
            throw CLIError.configuration("\(directory.path) is not a directory: the agent's sockets live there")
        }
        guard info.owner == getuid() else {
            throw CLIError.configuration(
                "\(directory.path) belongs to uid \(info.owner), not to you: the agent refuses it"
            )
        }
        let mode = Int(info.permissions)
        guard mode & 0o777 == 0o700 else {
            throw CLIError.configuration(
                "\(directory.path) has mode \(String(mode & 0o777, radix: 8)); the agent needs 700 "
                    + "(chmod 700 \(directory.path))"
            )
        }
    }
}
