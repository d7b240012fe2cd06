import CredentialVault
import Foundation
import VaultPOSIX

/// What git writes to a credential helper: `key=value` lines up to a blank line (or the end of input), keys ending
/// in `[]` repeatable (git's `git-credential` documentation, INPUT/OUTPUT FORMAT).
struct GitCredentialRequest: Sendable {
    /// Every value of each key, in order (`capability[]` and `wwwauth[]` keep their brackets).
    let fields: [String: [String]]

    /// The most lines read: git sends a handful.
    static let maximumLines = 1000

    /// `protocol`: `https`, `http`, ...
    var protocolName: String? { fields["protocol"]?.last }
    /// `host`, with its port when git gave one.
    var host: String? { fields["host"]?.last }
    /// The capabilities git offers (`capability[]`).
    var capabilities: Set<String> { Set(fields["capability[]"] ?? []) }

    /// Whether the host is a loopback IP literal (`127.0.0.0/8`, `[::1]`), with or without a port: the library's one
    /// rule for where plain http may carry a secret (`Loopback.isAddress`), so `127.0.0.1.attacker.example` and
    /// `localhost` are names like any other.
    var isLoopback: Bool {
        guard let host else { return false }
        let name: Substring =
            host.hasPrefix("[")
            ? host.dropFirst().prefix { $0 != "]" }
            : host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return Loopback.isAddress(String(name))
    }

    init(fields: [String: [String]]) {
        self.fields = fields
    }

    /// Parses `lines` (without their newlines).
    /// - Throws: ``CLIError`` for a line that is not `key=value`.
    init(lines: [String]) throws {
        var fields: [String: [String]] = [:]
        for line in lines {
            guard let equals = line.firstIndex(of: "="), equals != line.startIndex else {
                throw CLIError.usage("git sent a line that is not key=value; is this run by git?")
            }
            fields[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        self.fields = fields
    }

    /// Reads standard input up to a blank line or its end. A `password` or `credential` git passes along (on store
    /// and erase) is read and dropped.
    static func read() throws -> GitCredentialRequest {
        var lines: [String] = []
        while lines.count < maximumLines, var bytes = Terminal.readLineFromStandardInput() {
            defer { for index in bytes.indices { bytes[index] = 0 } }
            if bytes.isEmpty { break }
            // A secret git passes back is never kept, not even in a String.
            if bytes.starts(with: Array("password=".utf8)) || bytes.starts(with: Array("credential=".utf8)) { continue }
            lines.append(String(decoding: bytes, as: UTF8.self))
        }
        return try GitCredentialRequest(lines: lines)
    }
}
