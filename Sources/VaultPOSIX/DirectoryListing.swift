/// The names in a directory, read with `opendir` and `readdir`: the store lists its directory at every login that names
/// no user, and that step of a 4–5 ms login over https went from 40 µs with `FileManager`'s listing to 34 µs, cold
/// after Argon2id (issue 23).
package enum DirectoryListing {
    /// Every name in the directory at `path` except `.` and `..`, in the order the file system gives them. A name that
    /// is not UTF-8 comes back with U+FFFD in place of its bad bytes (no file of the store has one: their names are
    /// hashes and fixed dot-names).
    /// - Throws: ``FileStatus/Failure`` with the `errno` of `opendir` or `readdir` (`ENOENT`, `EACCES`, `ENOTDIR`, ...).
    package static func names(at path: String) throws(FileStatus.Failure) -> [String] {
        guard let directory = opendir(path) else { throw FileStatus.Failure(errorNumber: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            // readdir answers nil both at the end and on an error; only an error sets errno.
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw FileStatus.Failure(errorNumber: errno) }
                return names
            }
            // Read in place, up to its NUL: an entry is only as long as its name (d_reclen), so a copy of the whole
            // d_name array could read past the end of readdir's buffer.
            let name = String(
                cString: (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                    .assumingMemoryBound(to: CChar.self)
            )
            if name != "." && name != ".." { names.append(name) }
        }
    }
}
