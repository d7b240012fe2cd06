import Foundation
import VaultCrypto
import VaultPOSIX

/// A directory of small private files: mode 0700, files 0600, owned by this user, written atomically,
/// with an advisory lock that serialises processes.
///
/// File names come from the caller and are never raw user input (``UserStorage`` hashes user ids).
struct FileStore: Sendable {
    let directory: URL
    /// `directory`'s path, taken once: every call names its files by it.
    private let path: String

    /// Records larger than this are refused: an envelope is a few KiB.
    static let maximumFileSize = 1 << 20

    init(directory: URL) {
        self.directory = directory.standardizedFileURL
        path = self.directory.path
    }

    /// `$XDG_DATA_HOME/credential-vault`, else `~/.local/share/credential-vault`.
    static var defaultDirectory: URL { DefaultStore.directory(environment: ProcessInfo.processInfo.environment) }

    /// Creates the directory (0700) when missing and refuses one that others can reach.
    func prepare() throws(VaultError) {
        var info: FileStatus
        do throws(FileStatus.Failure) {
            info = try FileStatus(path: path, followingSymbolicLinks: false)
        } catch {
            guard error.errorNumber == ENOENT else { throw .fileSystem("inspect", path: path) }
            let parent = directory.deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                throw .fileSystem("create", path: parent.path, error.localizedDescription)
            }
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .fileSystem("create", path: path) }
            guard let created = try? FileStatus(path: path, followingSymbolicLinks: false) else {
                throw .fileSystem("inspect", path: path)
            }
            info = created
        }
        guard info.kind == .directory else {
            throw .fileSystem("use", path: path, "it is not a directory")
        }
        try checkOwnerAndMode(info, path: path)
    }

    /// The contents of `name`, or nil when it does not exist.
    func read(_ name: String) throws(VaultError) -> Data? {
        let file = filePath(name)
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .fileSystem("open", path: file)
        }
        defer { close(fd) }
        guard let info = try? FileStatus(descriptor: fd) else { throw .fileSystem("inspect", path: file) }
        guard info.kind == .regularFile else {
            throw .fileSystem("read", path: file, "it is not a regular file")
        }
        try checkOwnerAndMode(info, path: file)
        guard info.size <= Self.maximumFileSize else {
            throw .damagedRecord(path: file, "larger than \(Self.maximumFileSize) bytes")
        }
        // Sized by fstat, a byte over, so that the read that finds the end is the second; a file that grew since is
        // read on, up to the limit.
        var data = Data(count: Int(info.size) + 1)
        var length = 0
        while true {
            if length == data.count {
                guard length <= Self.maximumFileSize else {
                    throw .damagedRecord(path: file, "larger than \(Self.maximumFileSize) bytes")
                }
                data.count += 4096
            }
            let count = data.withUnsafeMutableBytes { VaultPOSIX.read(fd, $0.baseAddress! + length, $0.count - length) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .fileSystem("read", path: file)
            }
            if count == 0 { break }
            length += count
        }
        guard length <= Self.maximumFileSize else {
            throw .damagedRecord(path: file, "larger than \(Self.maximumFileSize) bytes")
        }
        data.count = length
        return data
    }

    /// Replaces `name` with `data` atomically: a crash at any point leaves the old file or the new one,
    /// never a mix. Temporary file, fsync, rename, then fsync of the directory so the rename itself is durable.
    func write(_ data: Data, to name: String) throws(VaultError) {
        let final = filePath(name)
        let temporary = filePath(".tmp-\(Hex.encode(SecureRandom.bytes(count: 8)))")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .fileSystem("create", path: temporary) }
        var succeeded = false
        defer { if !succeeded { unlink(temporary) } }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < data.count {
                let written = data.withUnsafeBytes { bytes in
                    VaultPOSIX.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw .fileSystem("write", path: temporary)
                }
                offset += written
            }
            guard fsync(fd) == 0 else { throw .fileSystem("flush", path: temporary) }
        }
        guard rename(temporary, final) == 0 else { throw .fileSystem("replace", path: final) }
        succeeded = true
        try syncDirectory()
    }

    /// The space a reservation takes: the largest file this store reads back (``maximumFileSize``), so every envelope
    /// a refresh can write that a later call could open fits it.
    static let reservationSize = maximumFileSize

    /// A temporary file of ``reservationSize`` bytes whose blocks are allocated and flushed now, so that
    /// ``write(_:to:into:)`` later changes only its bytes: taken before a refresh is sent, so that a store that cannot
    /// take the new envelope fails before the issuer rotates anything.
    ///
    /// Held with flock until it is written or released, so ``removeStaleTemporaryFiles()`` in another process leaves
    /// it alone; call it holding the directory's lock (``withLock(_:)``), as that cleanup does, so the file is locked
    /// before the cleanup can see it. A copy-on-write file system (btrfs, ZFS) may still need blocks for the write:
    /// there the reservation narrows the window, it does not close it.
    /// - Throws: ``VaultError/storeCannotReserve(directory:bytes:errorNumber:)`` (no space, read-only, quota, no
    ///   permission...).
    func reserve() throws(VaultError) -> StoreReservation {
        let size = Self.reservationSize
        let temporary = filePath(".tmp-\(Hex.encode(SecureRandom.bytes(count: 8)))")
        let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storeCannotReserve(directory: path, bytes: size, errorNumber: errno) }
        let reservation = StoreReservation(fd: fd, path: temporary)
        // Unlocked, another process's cleanup could remove it between the refresh and the rename: refuse instead.
        guard FileLock.tryExclusive(fd) == .acquired else {
            throw .storeCannotReserve(directory: path, bytes: size, errorNumber: errno)
        }
        let result = FileSpace.allocate(fd, count: size)
        guard result == 0 else { throw .storeCannotReserve(directory: path, bytes: size, errorNumber: result) }
        guard fsync(fd) == 0 else { throw .storeCannotReserve(directory: path, bytes: size, errorNumber: errno) }
        return reservation
    }

    /// Replaces `name` with `data` through `reservation` (from ``reserve()``): its bytes are written over the
    /// reserved ones, the file is cut to their length and flushed, renamed over `name`, and the directory flushed,
    /// the same atomic replacement as ``write(_:to:)``.
    func write(_ data: Data, to name: String, into reservation: StoreReservation) throws(VaultError) {
        let final = filePath(name)
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { bytes in
                pwrite(reservation.fd, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .fileSystem("write", path: reservation.path)
            }
            offset += written
        }
        guard ftruncate(reservation.fd, off_t(data.count)) == 0 else {
            throw .fileSystem("truncate", path: reservation.path)
        }
        guard fsync(reservation.fd) == 0 else { throw .fileSystem("flush", path: reservation.path) }
        guard rename(reservation.path, final) == 0 else { throw .fileSystem("replace", path: final) }
        try syncDirectory()
    }

    /// Removes `name`; a missing file is not an error.
    func remove(_ name: String) throws(VaultError) {
        let file = filePath(name)
        if unlink(file) != 0 {
            if errno == ENOENT { return }
            throw .fileSystem("remove", path: file)
        }
        try syncDirectory()
    }

    /// The names in the directory that end in `suffix`.
    func names(withSuffix suffix: String) throws(VaultError) -> [String] {
        Self.names(in: try listing(), withSuffix: suffix)
    }

    /// The names in `listing` (from ``listing()``) that end in `suffix`, dot-files left out, sorted.
    static func names(in listing: [String], withSuffix suffix: String) -> [String] {
        listing.filter { $0.hasSuffix(suffix) && !$0.hasPrefix(".") }.sorted()
    }

    /// Every name in the directory, dot-files included: one read of it, for a caller that both cleans up
    /// (``removeStaleTemporaryFiles(among:)``) and looks for records (``names(in:withSuffix:)``).
    func listing() throws(VaultError) -> [String] {
        do {
            return try DirectoryListing.names(at: path)
        } catch {
            throw .fileSystem("list", path: path, String(cString: strerror(error.errorNumber)))
        }
    }

    /// How long a call waits for another process's hold on the directory's lock file. A holder keeps it for one
    /// read or one fsync'd write, so a longer hold means the holder is stuck (stopped, or on a disk that hangs).
    static let lockWait: Duration = .seconds(10)

    /// Runs `body` holding an exclusive advisory lock (flock) on the directory's lock file, so that
    /// processes sharing the store take turns.
    /// - Throws: `.lockTimeout` naming the lock file when another holder keeps it past ``lockWait``.
    func withLock<T>(_ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        try prepare()
        let lockPath = filePath(".lock")
        let fd = FileLock.open(lockPath)
        guard fd >= 0 else { throw .fileSystem("open", path: lockPath) }
        defer { close(fd) }
        // Polled, not a blocking flock: a stuck holder ends in an error instead of a hang. Holds are short, and so
        // are the pauses.
        switch FileLock.waitExclusive(fd, until: ContinuousClock.now + Self.lockWait) {
        case .acquired: break
        case .taken: throw .lockTimeout(path: lockPath, waited: Self.lockWait)
        case .failed(let errorNumber): throw .fileSystem("lock", path: lockPath, String(cString: strerror(errorNumber)))
        }
        defer { FileLock.unlock(fd) }
        return try body()
    }

    /// Whether `name` exists (without following links).
    func exists(_ name: String) -> Bool {
        (try? FileStatus(path: filePath(name), followingSymbolicLinks: false)) != nil
    }

    /// Removes temporary files a killed writer left behind; call it holding the lock.
    func removeStaleTemporaryFiles() {
        guard let names = try? listing() else { return }
        removeStaleTemporaryFiles(among: names)
    }

    /// Removes the temporary files a killed writer left behind among `names` (a ``listing()`` taken under the same
    /// hold of the lock); call it holding the lock.
    func removeStaleTemporaryFiles(among names: [String]) {
        for name in names where name.hasPrefix(".tmp-") {
            let file = filePath(name)
            // A reservation another process holds (flock) is in use: its refresh may be on its way.
            let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if FileLock.tryExclusive(fd) == .acquired { unlink(file) }
        }
    }

    private func filePath(_ name: String) -> String {
        precondition(!name.contains("/") && name != "." && name != "..", "file names never come from raw input")
        return path + "/" + name
    }

    private func syncDirectory() throws(VaultError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .fileSystem("open", path: path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .fileSystem("flush", path: path) }
    }

    private func checkOwnerAndMode(_ info: FileStatus, path: String) throws(VaultError) {
        guard info.owner == geteuid() else { throw .wrongOwner(path: path) }
        let mode = info.permissions & 0o777
        guard mode & 0o077 == 0 else { throw .permissionsTooOpen(path: path, mode: mode) }
    }
}
