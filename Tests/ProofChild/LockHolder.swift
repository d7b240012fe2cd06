import CredentialVault
import Foundation

/// Another process that holds the store's session lock (as a login in progress does) until its standard input
/// ends. Prints `holding` once it holds it.
enum LockHolder {
    static func run(_ arguments: [String]) async {
        guard let store = arguments.first else { Progress.fail("usage: hold-lock STORE", status: 64) }
        do throws(VaultError) {
            let lock = try await AdvisoryLock.acquire(path: store + "/.session.lock", timeout: .seconds(10))
            Progress.say("holding")
            Progress.waitForEndOfInput()
            lock.release()
        } catch {
            Progress.fail("\(error)")
        }
    }
}
