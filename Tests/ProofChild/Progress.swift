import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child's lines to its parent: one `write(2)` each, unbuffered, so a line the parent read was said before
/// the kill that followed it.
enum Progress {
    /// Writes `line` and a newline to standard output.
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// Writes `message` to standard error and exits with `status`.
    static func fail(_ message: String, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data("vault-proof-child: \(message)\n".utf8))
        exit(status)
    }

    /// A line of standard input, or a failure naming `what`.
    static func readInput(_ what: String) -> String {
        guard let line = readLine(strippingNewline: true) else { fail("standard input ended before \(what)") }
        return line
    }

    /// Blocks until standard input ends: the parent closes it (or dies) to let the child go.
    static func waitForEndOfInput() {
        while readLine() != nil {}
    }
}
