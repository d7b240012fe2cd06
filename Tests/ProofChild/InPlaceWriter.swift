import Foundation

#if canImport(Glibc)
import Glibc
private let posixWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let posixWrite = Darwin.write
#endif

/// The planted defect both proof suites must catch: a writer that replaces the envelope in place (truncate, then
/// write), with no temporary file, no fsync and no rename. It lives here, in the test harness; the library has no
/// such switch.
///
/// It rewrites the store's one envelope. With `--pause-mid-write` it writes the envelope's first half, prints
/// `mid-write` and waits for the parent's kill, so the crash suite's kill lands mid-write every time. Without it,
/// it writes 64 KiB of padding (JSON allows leading whitespace) and then the envelope, as a writer of a larger
/// record would, so a full disk cuts the file short; it prints `outcome ok` or `outcome error write<TAB>REASON`.
enum InPlaceWriter {
    static func run(_ arguments: [String]) {
        guard let store = arguments.first else {
            Progress.fail("usage: in-place-write STORE [--pause-mid-write]", status: 64)
        }
        let pause = arguments.contains("--pause-mid-write")
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: store))?.filter { $0.hasSuffix(".vault") } ?? []
        guard names.count == 1 else { Progress.fail("expected one envelope in \(store), found \(names)") }
        let path = store + "/" + names[0]
        guard let envelope = FileManager.default.contents(atPath: path) else { Progress.fail("cannot read \(path)") }
        let fd = open(path, O_WRONLY | O_TRUNC)
        guard fd >= 0 else {
            Progress.say("outcome error open\t\(String(cString: strerror(errno)))")
            return
        }
        defer { close(fd) }
        if pause {
            let half = envelope.count / 2
            guard write(fd, envelope.prefix(half)) else { Progress.fail("write failed") }
            Progress.say("mid-write")
            Progress.waitForEndOfInput()
            guard write(fd, envelope.dropFirst(half)) else { Progress.fail("write failed") }
            return
        }
        let padded = Data(repeating: UInt8(ascii: " "), count: 64 << 10) + envelope
        Progress.say(write(fd, padded) ? "outcome ok" : "outcome error write\t\(String(cString: strerror(errno)))")
    }

    /// Writes all of `data` to `fd`; false at the first failure.
    private static func write(_ fd: Int32, _ data: Data) -> Bool {
        var offset = 0
        let bytes = [UInt8](data)
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { posixWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
