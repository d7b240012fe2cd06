#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Linux's `fallocate(2)`, the system call itself, which Swift's Glibc module does not declare (it is a GNU
/// extension): unlike `posix_fallocate`, it never falls back to writing a byte into each block, so when it succeeds
/// the blocks are the file's and "subsequent writes into the range specified by offset and len are guaranteed not to
/// fail because of lack of disk space" (fallocate(2)), with nothing to sync for that.
package enum BlockAllocation {
    private typealias Fallocate = @convention(c) (Int32, Int32, Int, Int) -> Int32

    /// The C library's `fallocate`, found once; nil where there is none (not Linux, or not glibc).
    private static let fallocate: Fallocate? = {
        #if os(Linux)
        guard let library = dlopen(nil, RTLD_NOW), let symbol = dlsym(library, "fallocate") else { return nil }
        return unsafeBitCast(symbol, to: Fallocate.self)
        #else
        return nil
        #endif
    }()

    /// Allocates the first `count` bytes of `fd` with `fallocate(2)` (mode 0): 0 when the blocks are allocated, the
    /// errno when the call failed, nil when this system has no such call. `EOPNOTSUPP` means the file system cannot.
    package static func allocate(_ fd: Int32, count: Int) -> Int32? {
        guard let fallocate else { return nil }
        while true {
            if fallocate(fd, 0, 0, count) == 0 { return 0 }
            if errno != EINTR { return errno }
        }
    }
}
