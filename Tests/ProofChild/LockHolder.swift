import CredentialVault
import Foundation

/// Another process that holds one of the store's locks until its standard input ends: the session lock (as a login
/// in progress does) by default, or the lock file named (`.lock`, which a writer holds around each read or write).
/// Prints `holding` once it holds it.
enum LockHolder {
    static func run(_ arguments: [String]) async {
        guard let store = arguments.first else { Progress.fail("usage: hold-lock STORE [LOCK_FILE]", status: 64) }
        let name = arguments.count > 1 ? arguments[1] : ".session.lock"
        do throws(VaultError) {
            let lock = try await AdvisoryLock.acquire(path: store + "/" + name, timeout: .seconds(10))
            Progress.say("holding")
            Progress.waitForEndOfInput()
            lock.release()
        } catch {
            Progress.fail("\(error)")
        }
    }
}
