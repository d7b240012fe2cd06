/// The names in a directory, read with `opendir` and `readdir`: the store lists its directory at every login that names
/// no user, and `FileManager`'s listing cost about 40 µs of a 4–5 ms login over https where this costs its three system
/// calls (issue 23).
package enum DirectoryListing {
    /// Every name in the directory at `path` except `.` and `..`, in the order the file system gives them.
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
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }
}
