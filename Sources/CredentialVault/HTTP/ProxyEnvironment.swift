public import Foundation
import VaultPOSIX

/// The proxies a user set in the environment, read the way curl reads them: the one place that parses them.
///
/// - `https_proxy` / `HTTPS_PROXY` for https, `http_proxy` / `HTTP_PROXY` for plain http (the lower-case name
///   wins when both are set, as in curl). A value is `[http://][user[:password]@]host[:port]`; the port defaults to
///   1080 (curl's default); credentials, percent-decoded, are sent to the proxy as HTTP Basic authentication.
///   A proxy URL of another scheme (`socks5://`, `https://`) is not supported and is ignored.
/// - `no_proxy` / `NO_PROXY`: comma-separated; `*` as the whole value bypasses every proxy (a `*` among other
///   entries matches nothing, as in curl); a name entry matches the host itself and every name below it
///   (`example.com` and `.example.com` both match `example.com` and `api.example.com`); a host that is an IP address
///   is matched only by address entries, exactly or by a CIDR prefix (`10.0.0.0/8`, `2001:db8::/32`; curl 7.86 and
///   later), never by a name suffix (`0.1` does not match `10.0.0.1`); a `:port` after an entry is ignored.
/// - A loopback host (127.0.0.0/8, ::1, `localhost`) is never proxied.
///
/// A pure function of the environment it is given, so its rules are tested with known answers.
public struct ProxyEnvironment: Sendable, Hashable {
    /// One proxy server.
    public struct Proxy: Sendable, Hashable, CustomStringConvertible {
        /// The proxy's host name or address (without brackets).
        public let host: String
        /// The proxy's port.
        public let port: Int
        /// The user name for HTTP Basic authentication to the proxy, if the URL carried one.
        public let username: String?
        /// The password for HTTP Basic authentication to the proxy, if the URL carried one. Never printed.
        public let password: String?

        /// `host:port`, with `user@` when credentials are set; never the password.
        public var description: String {
            let shown = host.contains(":") ? "[\(host)]" : host
            return (username.map { "\($0)@" } ?? "") + "\(shown):\(port)"
        }
    }

    /// The proxy for https, if set.
    public let httpsProxy: Proxy?
    /// The proxy for plain http, if set.
    public let httpProxy: Proxy?
    /// Whether `no_proxy` is `*` (the whole value): no host is proxied.
    public let bypassesAll: Bool
    /// The `no_proxy` entries, lower-cased, without a leading dot, brackets or port.
    public let noProxy: [String]
    /// The address entries of ``noProxy`` (with their CIDR prefixes), parsed once rather than at every request.
    private let noProxyNetworks: [NetworkPrefix]

    /// The proxies set in `environment` (by default this process's).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String) -> String? {
            for key in [name.lowercased(), name.uppercased()] {
                if let value = environment[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
            }
            return nil
        }
        httpsProxy = value("https_proxy").flatMap(Self.proxy(from:))
        httpProxy = value("http_proxy").flatMap(Self.proxy(from:))
        let entries = (value("no_proxy") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        bypassesAll = entries == ["*"]
        noProxy = entries.compactMap(Self.normalizedEntry)
        noProxyNetworks = noProxy.compactMap(NetworkPrefix.init)
    }

    /// The proxy to send a request for `url` through, or nil to connect directly.
    public func proxy(for url: URL) -> Proxy? {
        guard let scheme = url.scheme?.lowercased(), let rawHost = url.host(percentEncoded: false) else { return nil }
        let proxy: Proxy? =
            switch scheme {
            case "https": httpsProxy
            case "http": httpProxy
            default: nil
            }
        guard let proxy else { return nil }
        let host = Self.bare(rawHost).lowercased()
        if host == "localhost" || Loopback.isAddress(host) || bypassesAll { return nil }
        if let address = NetworkAddress(host) {
            if noProxyNetworks.contains(where: { $0.contains(address) }) { return nil }
        } else if noProxy.contains(where: { host == $0 || host.hasSuffix("." + $0) }) {
            return nil
        }
        return proxy
    }

    /// `[http://][user[:password]@]host[:port][/]` as a proxy; nil for another scheme or no host.
    private static func proxy(from value: String) -> Proxy? {
        let text = value.contains("://") ? value : "http://" + value
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "http",
            let host = components.host.map(bare), !host.isEmpty
        else { return nil }
        let port = components.port ?? 1080
        guard (1...65535).contains(port) else { return nil }
        return Proxy(
            host: host,
            port: port,
            username: components.user.flatMap { $0.isEmpty ? nil : $0 },
            password: components.password
        )
    }

    /// A `no_proxy` entry as compared: lower case, no leading or trailing dot, no brackets, no port (a CIDR prefix
    /// such as `/8` is kept).
    private static func normalizedEntry(_ entry: String) -> String? {
        var entry = entry.lowercased()
        if entry.hasPrefix("[") {
            // [v6], [v6]:port or [v6]/bits: the address, with its CIDR prefix kept and its port dropped
            guard let close = entry.firstIndex(of: "]") else { return nil }
            let rest = entry[entry.index(after: close)...]
            entry = String(entry[entry.index(after: entry.startIndex)..<close]) + (rest.hasPrefix("/") ? rest : "")
        } else if entry.filter({ $0 == ":" }).count == 1, let colon = entry.firstIndex(of: ":") {
            // name:port or v4:port (an IPv6 address has more than one colon)
            entry = String(entry[..<colon])
        }
        while entry.hasPrefix(".") { entry.removeFirst() }
        while entry.hasSuffix(".") { entry.removeLast() }
        return entry.isEmpty || entry == "*" ? nil : entry
    }

    /// A host without IPv6 brackets or a trailing dot.
    private static func bare(_ host: String) -> String {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
