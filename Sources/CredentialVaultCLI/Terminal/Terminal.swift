import Foundation
import VaultPOSIX

/// Standard error and the terminal: messages for people, the password prompt, the progress line.
enum Terminal {
    /// Whether standard error is a terminal (the progress line is drawn only then).
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether standard input is a terminal (a password can be asked for only then).
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Writes `text` and a newline to standard error, terminal controls escaped except line breaks: a message
    /// may quote an issuer's answer or a setting.
    static func note(_ text: String) {
        writeError(Format.escapingControlCharacters(text, keepingNewlines: true) + "\n")
    }

    /// Writes `text` to standard error as it is (the prompt and the progress line; nothing untrusted).
    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Writes `text` and a newline to standard output, straight to the descriptor (no buffer to lose on exit),
    /// terminal controls escaped except line breaks. JSON from ``Format/json(_:)`` holds none, so it is
    /// written exactly.
    static func output(_ text: String) {
        let safe = Format.escapingControlCharacters(text, keepingNewlines: true)
        FileHandle.standardOutput.write(Data((safe + "\n").utf8))
    }

    /// Reads one line from standard input as bytes, one by one so nothing after the newline is consumed;
    /// nil at end of input. The trailing `\n` (and a `\r` before it) is dropped. The caller zeroes the bytes
    /// when they hold a secret.
    static func readLineFromStandardInput(limit: Int = 64 * 1024) -> [UInt8]? {
        var bytes: [UInt8] = []
        // One buffer for the whole line: growing it would leave copies of a password in freed memory.
        bytes.reserveCapacity(limit)
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
        return bytes
    }

    /// Reads all of standard input, up to `limit` bytes and never more.
    static func readAllStandardInput(limit: Int = 1 << 20) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while data.count < limit {
            let wanted = min(buffer.count, limit - data.count)
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, wanted) }
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
