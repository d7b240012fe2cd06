import Foundation
import VaultPOSIX

/// A temporary file in the store whose space is taken (``FileStore/reserve()``): written and renamed over an
/// envelope once a refresh is answered, else removed when released.
final class StoreReservation: Sendable {
    let fd: Int32
    let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Once the file was renamed over the envelope its name is gone, and the unlink does nothing.
    deinit {
        unlink(path)
        close(fd)
    }
}
