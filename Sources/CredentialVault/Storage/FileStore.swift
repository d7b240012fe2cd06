import Foundation
import VaultCrypto

#if canImport(Glibc)
import Glibc
private let posixRead = Glibc.read
private let posixWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let posixRead = Darwin.read
private let posixWrite = Darwin.write
#endif

/// A directory of small private files: mode 0700, files 0600, owned by this user, written atomically,
/// with an advisory lock that serialises processes.
///
/// File names come from the caller and are never raw user input (``UserStorage`` hashes user ids).
struct FileStore: Sendable {
    let directory: URL
    private var path: String { directory.path }

    /// Records larger than this are refused: an envelope is a few KiB.
    static let maximumFileSize = 1 << 20

    init(directory: URL) {
        self.directory = directory.standardizedFileURL
    }

    /// `$XDG_DATA_HOME/credential-vault`, else `~/.local/share/credential-vault`.
    static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appending(path: "credential-vault")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appending(path: ".local/share/credential-vault")
    }

    /// Creates the directory (0700) when missing and refuses one that others can reach.
    func prepare() throws(SecureStorageError) {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw ioError("inspect", path) }
            let parent = directory.deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                throw .ioFailed(operation: "create", path: parent.path, reason: "\(error.localizedDescription)")
            }
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw ioError("create", path) }
            guard lstat(path, &info) == 0 else { throw ioError("inspect", path) }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .ioFailed(operation: "use", path: path, reason: "it is not a directory")
        }
        try checkOwnerAndMode(info, path: path)
    }

    /// The contents of `name`, or nil when it does not exist.
    func read(_ name: String) throws(SecureStorageError) -> Data? {
        let file = filePath(name)
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError("open", file)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ioError("inspect", file) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .ioFailed(operation: "read", path: file, reason: "it is not a regular file")
        }
        try checkOwnerAndMode(info, path: file)
        guard Int(info.st_size) <= Self.maximumFileSize else {
            throw .corruptRecord(path: file, reason: "larger than \(Self.maximumFileSize) bytes")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { posixRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ioError("read", file)
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= Self.maximumFileSize else {
                throw .corruptRecord(path: file, reason: "larger than \(Self.maximumFileSize) bytes")
            }
        }
        return data
    }

    /// Replaces `name` with `data` atomically: a crash at any point leaves the old file or the new one,
    /// never a mix. Temporary file, fsync, rename, then fsync of the directory so the rename itself is durable.
    func write(_ data: Data, to name: String) throws(SecureStorageError) {
        let final = filePath(name)
        let temporary = filePath(".tmp-\(SecureRandom.bytes(count: 8).map { String(format: "%02x", $0) }.joined())")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("create", temporary) }
        var succeeded = false
        defer { if !succeeded { unlink(temporary) } }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < data.count {
                let written = data.withUnsafeBytes { bytes in
                    posixWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw ioError("write", temporary)
                }
                offset += written
            }
            guard fsync(fd) == 0 else { throw ioError("flush", temporary) }
        }
        guard rename(temporary, final) == 0 else { throw ioError("replace", final) }
        succeeded = true
        try syncDirectory()
    }

    /// Removes `name`; a missing file is not an error.
    func remove(_ name: String) throws(SecureStorageError) {
        let file = filePath(name)
        if unlink(file) != 0 {
            if errno == ENOENT { return }
            throw ioError("remove", file)
        }
        try syncDirectory()
    }

    /// The names in the directory that end in `suffix`.
    func names(withSuffix suffix: String) throws(SecureStorageError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path)
                .filter { $0.hasSuffix(suffix) && !$0.hasPrefix(".") }
                .sorted()
        } catch {
            throw .ioFailed(operation: "list", path: path, reason: error.localizedDescription)
        }
    }

    /// Runs `body` holding an exclusive advisory lock (flock) on the directory's lock file, so that
    /// processes sharing the store take turns.
    func withLock<T>(_ body: () throws(SecureStorageError) -> T) throws(SecureStorageError) -> T {
        try prepare()
        let lockPath = filePath(".lock")
        let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("open", lockPath) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw ioError("lock", lockPath) }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Whether `name` exists (without following links).
    func exists(_ name: String) -> Bool {
        var info = stat()
        return lstat(filePath(name), &info) == 0
    }

    /// Removes temporary files a killed writer left behind; call it holding the lock.
    func removeStaleTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where name.hasPrefix(".tmp-") { unlink(filePath(name)) }
    }

    private func filePath(_ name: String) -> String {
        precondition(!name.contains("/") && name != "." && name != "..", "file names never come from raw input")
        return path + "/" + name
    }

    private func syncDirectory() throws(SecureStorageError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("flush", path) }
    }

    private func checkOwnerAndMode(_ info: stat, path: String) throws(SecureStorageError) {
        guard info.st_uid == geteuid() else { throw .wrongOwner(path: path) }
        let mode = UInt32(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .permissionsTooOpen(path: path, mode: mode) }
    }

    private func ioError(_ operation: String, _ path: String) -> SecureStorageError {
        .ioFailed(operation: operation, path: path, reason: String(cString: strerror(errno)))
    }
}

/// An exclusive advisory lock held across a whole login or refresh (KDF, key service, token endpoint,
/// write), so that two processes never redeem the same refresh token: with rotation and reuse detection,
/// the second redemption would revoke the whole token family.
final class SessionLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Waits (without blocking a thread) until the store's session lock is free, then holds it until released.
    static func acquire(
        in store: FileStore,
        timeout: Duration = .seconds(60)
    ) async throws(SecureStorageError) -> SessionLock {
        try store.prepare()
        let path = store.directory.path + "/.session.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .ioFailed(operation: "open", path: path, reason: String(cString: strerror(errno)))
        }
        let deadline = ContinuousClock.now + timeout
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(fd)
                throw .ioFailed(operation: "lock", path: path, reason: "another process holds it")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return SessionLock(fd: fd)
    }
}
