/// Taking a file's disk blocks before they are written.
package enum FileSpace {
    /// Allocates the first `count` bytes of the open file `descriptor` now, so later writes over them need no new
    /// blocks (on a file system that overwrites in place).
    /// - Returns: 0, or the error number of the call that failed (`ENOSPC`, `EDQUOT`, ...).
    package static func allocate(_ descriptor: Int32, count: Int) -> Int32 {
        #if canImport(Glibc) || canImport(Musl)
        // glibc writes a byte into each block where the file system has no fallocate; either way the blocks are
        // taken now.
        return posix_fallocate(descriptor, 0, off_t(count))
        #else
        return writeZeros(descriptor, count: count)
        #endif
    }

    #if !(canImport(Glibc) || canImport(Musl))
    /// Writes `count` zero bytes at the start of `descriptor`: 0, or the errno of the write that failed.
    private static func writeZeros(_ descriptor: Int32, count: Int) -> Int32 {
        let zeros = [UInt8](repeating: 0, count: 65_536)
        var offset = 0
        while offset < count {
            let written = zeros.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress!, min($0.count, count - offset), off_t(offset))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }
    #endif
}
