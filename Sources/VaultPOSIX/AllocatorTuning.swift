/// Settings of the C library's allocator.
package enum AllocatorTuning {
    /// `M_TRIM_THRESHOLD` of `<malloc.h>`, which Swift's Glibc module does not include (nor `mallopt`).
    private static let trimThreshold: Int32 = -1

    /// Sets glibc's trim threshold (and with it, fixes the mmap threshold): free memory at the top of a heap is given
    /// back to the kernel only past `bytes`. Elsewhere than glibc it does nothing.
    package static func setTrimThreshold(bytes: Int32) {
        #if canImport(Glibc)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let library = dlopen(nil, RTLD_NOW), let symbol = dlsym(library, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(trimThreshold, bytes)
        #endif
    }
}
