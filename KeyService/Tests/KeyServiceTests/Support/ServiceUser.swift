import Foundation
import VaultPOSIX

/// Who a server the tests start runs as, and how a command is run as them.
///
/// PostgreSQL's `initdb` and `postgres` refuse to run as root: when the tests run as root (CI), they run as the
/// `postgres` user Debian's package creates, through `setpriv` (util-linux; it execs the command, so the PID the test
/// holds is the server's shell, and the standard input the server's watchdog reads stays the test's pipe).
/// Otherwise they run as the test's own user.
struct ServiceUser: Sendable {
    /// The user's id and group, or nil for this process's own user.
    let identity: (uid: uid_t, gid: gid_t)?

    /// The `postgres` user when this process is root, else this process's user.
    /// - Throws: ``HarnessError`` when running as root and there is no `postgres` user.
    static func forPostgres() throws -> ServiceUser {
        guard geteuid() == 0 else { return ServiceUser(identity: nil) }
        guard let entry = getpwnam("postgres") else {
            throw HarnessError(
                "the tests run as root, and PostgreSQL refuses root, but there is no postgres user to run it as: "
                    + "apt-get install -y postgresql creates it (make deps installs it)"
            )
        }
        return ServiceUser(identity: (entry.pointee.pw_uid, entry.pointee.pw_gid))
    }

    /// `arguments` run as this user.
    func command(_ arguments: [String]) -> [String] {
        guard let identity else { return arguments }
        return ["/usr/bin/setpriv", "--reuid=\(identity.uid)", "--regid=\(identity.gid)", "--clear-groups", "--"]
            + arguments
    }

    /// Gives `url` (a directory the test made) to this user.
    func own(_ url: URL) throws {
        guard let identity else { return }
        guard chown(url.path, identity.uid, identity.gid) == 0 else {
            throw HarnessError("cannot give \(url.path) to uid \(identity.uid): \(String(cString: strerror(errno)))")
        }
    }
}
