import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The floor's write: an envelope-sized file written to a temporary name, fsync'd, renamed into place, and the
/// directory fsync'd, as the vault writes its envelope.
enum FloorWrite {
    static func store(_ envelope: Data, in directory: URL) {
        let temporary = directory.path + "/.tmp"
        let final = directory.path + "/envelope"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = envelope.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        rename(temporary, final)
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY)
        fsync(directoryFD)
        close(directoryFD)
    }
}
