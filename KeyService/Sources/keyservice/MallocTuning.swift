import VaultPOSIX

/// glibc's allocator tuned for a server that answers in batches.
///
/// By default glibc gives the top of a thread's heap back to the kernel whenever more than 128 KiB of it is free
/// (`madvise`), and the next batch faults the same pages in again: under `wrk` that trim-and-fault cycle, on the
/// thread that commits the SQLite batches, was about 7% of the server's CPU. A threshold of 64 MiB keeps the pages
/// (the process's heap stays as large as its busiest moment, a few MiB), and fixes the mmap threshold too.
enum MallocTuning {
    /// Applies the tuning; call once, at start. Elsewhere than glibc it does nothing (``AllocatorTuning``).
    static func apply() {
        AllocatorTuning.setTrimThreshold(bytes: 64 << 20)
    }
}
