import Foundation

#if canImport(Glibc)
import Glibc
// Glibc imports RLIMIT_FSIZE as a case of an enum that setrlimit takes by another name.
private let fileSizeResource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
#elseif canImport(Darwin)
import Darwin
private let fileSizeResource = RLIMIT_FSIZE
#endif

/// `--file-size-limit BYTES`, taken out of the arguments and applied before any mode runs: RLIMIT_FSIZE, with
/// SIGXFSZ ignored, so a write past the limit fails with EFBIG, as a write to a full disk fails with ENOSPC.
enum FileSizeLimit {
    /// `arguments` without the option; the limit is in force when it returns.
    static func apply(_ arguments: [String]) -> [String] {
        guard let flag = arguments.firstIndex(of: "--file-size-limit") else { return arguments }
        guard flag + 1 < arguments.count, let bytes = UInt64(arguments[flag + 1]) else {
            Progress.fail("--file-size-limit needs a number of bytes", status: 64)
        }
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        guard setrlimit(fileSizeResource, &limit) == 0 else { Progress.fail("setrlimit failed") }
        var rest = arguments
        rest.removeSubrange(flag...(flag + 1))
        return rest
    }
}
