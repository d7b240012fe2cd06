import KeyServiceCore

/// A `--listen` value: `HOST:PORT`, `[IPV6]:PORT`.
struct ListenAddress: Equatable {
    let host: String
    let port: Int

    /// Parses `text`.
    /// - Throws: ``KeyServiceError`` for a missing or bad port, or an empty host.
    init(_ text: String) throws {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw KeyServiceError("--listen \(text): expected [ADDRESS]:PORT") }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw KeyServiceError("--listen \(text): expected HOST:PORT, such as 127.0.0.1:8080")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw KeyServiceError("--listen \(text): the host is empty") }
        guard let port = Int(portPart), (0...65_535).contains(port) else {
            throw KeyServiceError("--listen \(text): the port must be 0 to 65535")
        }
        host = String(hostPart)
        self.port = port
    }

    /// `host:port` for a URL: an IPv6 address in brackets.
    func urlAuthority(port: Int) -> String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
