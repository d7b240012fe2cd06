import CredentialVault
import Foundation

/// One storage call for the disk-fault suite, in a process of its own so that a fault that belongs to a process
/// (a file-size limit, another uid) stays out of the test process.
///
/// Operations, with their standard input:
/// - `store`: the password, then a token to seal in the existing envelope.
/// - `open`: the password, then the token the envelope should hold; prints `opened expected` or `opened other`.
///
/// Prints `outcome ok`, or `outcome error KIND<TAB>DESCRIPTION` for a ``VaultError`` (descriptions carry no secret).
enum StoreProbe {
    static func run(_ arguments: [String]) async {
        guard arguments.count == 4, let url = URL(string: arguments[1]) else {
            Progress.fail("usage: probe store|open KEY_SERVICE STORE USER_ID", status: 64)
        }
        let userId = arguments[3]
        let password = Progress.readInput("the password")
        let argument = Progress.readInput("the operation's argument")
        do throws(VaultError) {
            let storage = UserStorage(
                keyService: try HTTPKeyService(
                    baseURL: url,
                    transport: DefaultHTTPTransport.make(trustRoots: EnvironmentTrustRoots.roots),
                    timeout: 60
                ),
                directory: URL(fileURLWithPath: arguments[2]),
                opsLimit: 2,
                memLimitBytes: 19 << 20
            )
            switch arguments[0] {
            case "store":
                try await storage.storeRefreshToken(
                    RefreshToken(token: argument, userId: userId),
                    withExistingPassword: password
                )
                Progress.say("outcome ok")
            case "open":
                let opened = try await storage.getStoredRefreshToken(userId: userId, password: password)
                Progress.say(opened.token == argument ? "opened expected" : "opened other")
            default:
                Progress.fail("unknown operation '\(arguments[0])'", status: 64)
            }
        } catch {
            Progress.say("outcome error \(error.kind)\t\(error.description)")
        }
    }
}
