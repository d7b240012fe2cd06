/// What `stat(2)` says about a file: the fields this package reads, in Swift types.
///
/// Why a module of its own: the C `struct stat` is declared by the C library's headers, which Foundation's and
/// Dispatch's C modules include too. Which module Swift names as the struct's definer depends on the order the
/// modules load in, and under `MemberImportVisibility` a file may read `st_mode` only when it imports that module:
/// the same code built or failed from one build to the next. This module imports the C library and nothing else,
/// so here the definer is always the C library; every other module sees only this struct.
package struct FileStatus: Sendable, Equatable {
    /// What kind of file it is.
    package enum Kind: Sendable, Equatable {
        case regularFile
        case directory
        case symbolicLink
        case other
    }

    /// A failed `stat`, `lstat` or `fstat`, or `opendir` or `readdir` (``DirectoryListing``).
    package struct Failure: Error, Sendable, Equatable {
        /// The call's `errno` (`ENOENT`, `EACCES`, ...).
        package let errorNumber: Int32
    }

    /// What kind of file it is (`S_IFMT` of the mode).
    package let kind: Kind
    /// The permission bits, set-id and sticky bits included (`st_mode & 0o7777`).
    package let permissions: UInt32
    /// The owner's user id.
    package let owner: UInt32
    /// The size in bytes.
    package let size: Int64

    /// The status of the file at `path`; of a symbolic link itself, not its target, unless `followingSymbolicLinks`.
    /// - Throws: ``Failure`` with the call's `errno`.
    package init(path: String, followingSymbolicLinks: Bool = true) throws(Failure) {
        var status = stat()
        let result = followingSymbolicLinks ? stat(path, &status) : lstat(path, &status)
        guard result == 0 else { throw Failure(errorNumber: errno) }
        self.init(status)
    }

    /// The status of the open file `descriptor` (no window for the path to name another file meanwhile).
    /// - Throws: ``Failure`` with the call's `errno`.
    package init(descriptor: Int32) throws(Failure) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Failure(errorNumber: errno) }
        self.init(status)
    }

    private init(_ status: stat) {
        let mode = UInt32(status.st_mode)
        kind =
            switch mode & S_IFMT {
            case S_IFREG: .regularFile
            case S_IFDIR: .directory
            case S_IFLNK: .symbolicLink
            default: .other
            }
        permissions = mode & 0o7777
        owner = UInt32(status.st_uid)
        size = Int64(status.st_size)
    }
}
