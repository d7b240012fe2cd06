import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard error and the terminal: messages for people, the password prompt, the progress line.
enum Terminal {
    /// Whether standard error is a terminal (the progress line is drawn only then).
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether standard input is a terminal (a password can be asked for only then).
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Writes `text` and a newline to standard error.
    static func note(_ text: String) {
        writeError(text + "\n")
    }

    /// Writes `text` to standard error as it is.
    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Writes `text` and a newline to standard output, straight to the descriptor (no buffer to lose on exit).
    static func output(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Reads one line from standard input, byte by byte so nothing after the newline is consumed;
    /// nil at end of input. The trailing `\n` (and a `\r` before it) is dropped.
    static func readLineFromStandardInput(limit: Int = 64 * 1024) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < limit {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            if count == 0 {
                if bytes.isEmpty { return nil }
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads all of standard input (up to `limit` bytes).
    static func readAllStandardInput(limit: Int = 1 << 20) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while data.count < limit {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }
}
