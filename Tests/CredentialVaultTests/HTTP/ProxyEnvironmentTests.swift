import CredentialVault
import Foundation
import Testing

/// Known answers for the proxy variables, from curl's documentation: `man curl` (ENVIRONMENT: `http_proxy`,
/// `HTTPS_PROXY`, `NO_PROXY`; "If the port number is not specified in the proxy string, it is assumed to be 1080")
/// and CURLOPT_NOPROXY(3) ("*" matches all hosts; a name matches itself and its subdomains, with or without a
/// leading dot; IP addresses match as given, or by CIDR notation since 7.86.0), with curl's lib/noproxy.c for what
/// the manual leaves open (`*` counts only as the whole value; an address host is never matched by a name suffix).
@Suite("proxies are read from the environment as curl reads them")
struct ProxyEnvironmentTests {
    private static func proxy(_ url: String, _ environment: [String: String]) throws -> String? {
        ProxyEnvironment(environment: environment).proxy(for: try #require(URL(string: url)))?.description
    }

    @Test("HTTPS_PROXY carries https; the lower-case name wins; the port defaults to 1080")
    func httpsProxy() throws {
        #expect(
            try Self.proxy("https://id.example.com/", ["HTTPS_PROXY": "http://proxy.corp:3128"]) == "proxy.corp:3128"
        )
        #expect(try Self.proxy("https://id.example.com/", ["https_proxy": "proxy.corp"]) == "proxy.corp:1080")
        #expect(
            try Self.proxy("https://id.example.com/", ["https_proxy": "http://a:1", "HTTPS_PROXY": "http://b:2"])
                == "a:1"
        )
        #expect(try Self.proxy("https://id.example.com/", ["HTTP_PROXY": "http://p:8080"]) == nil)
        #expect(try Self.proxy("https://id.example.com/", [:]) == nil)
    }

    @Test("HTTP_PROXY carries plain http only, and never to loopback")
    func httpProxy() throws {
        #expect(try Self.proxy("http://id.example.com/", ["http_proxy": "http://p:8080"]) == "p:8080")
        #expect(try Self.proxy("http://127.0.0.1:9000/", ["HTTP_PROXY": "http://p:8080"]) == nil)
        #expect(try Self.proxy("https://[::1]:9000/", ["HTTPS_PROXY": "http://p:8080"]) == nil)
        #expect(try Self.proxy("https://localhost/", ["HTTPS_PROXY": "http://p:8080"]) == nil)
        #expect(try Self.proxy("https://127.9.9.9/", ["HTTPS_PROXY": "http://p:8080"]) == nil)
    }

    @Test("credentials in the proxy URL are kept, percent-decoded, and the password is never printed")
    func credentials() throws {
        let environment = ProxyEnvironment(environment: ["HTTPS_PROXY": "http://alice:s%40cret@proxy.corp:3128/"])
        let url = try #require(URL(string: "https://id.example.com"))
        let proxy = try #require(environment.proxy(for: url))
        #expect(proxy.username == "alice")
        #expect(proxy.password == "s@cret")
        #expect(proxy.description == "alice@proxy.corp:3128")
        #expect(!"\(environment)".contains("cret"))
    }

    @Test("a proxy of another scheme is not used")
    func otherSchemes() throws {
        #expect(try Self.proxy("https://id.example.com/", ["HTTPS_PROXY": "socks5://p:1080"]) == nil)
        #expect(try Self.proxy("https://id.example.com/", ["HTTPS_PROXY": "https://p:443"]) == nil)
    }

    @Test(
        "NO_PROXY: suffixes with or without a dot, exact names, IPs and CIDR prefixes, ports ignored, * alone for all",
        arguments: [
            ("example.com", "https://example.com/", true),
            ("example.com", "https://api.example.com/", true),
            (".example.com", "https://api.example.com/", true),
            (".example.com", "https://example.com/", true),
            ("example.com", "https://badexample.com/", false),
            ("example.com", "https://example.com.evil.net/", false),
            ("other.org, example.com", "https://a.b.example.com/", true),
            ("EXAMPLE.com", "https://Api.Example.COM/", true),
            ("example.com:8443", "https://example.com/", true),
            ("10.1.2.3", "https://10.1.2.3:8443/", true),
            ("10.1.2.3", "https://10.1.2.4/", false),
            ("[2001:db8::1]", "https://[2001:db8::1]/", true),
            ("2001:db8::1", "https://[2001:db8::1]:443/", true),
            ("*", "https://anything.example/", true),
            ("", "https://example.com/", false),
            // curl's noproxy.c: "*" bypasses all only as the whole value; an address host is matched by address
            // entries alone, exactly or by CIDR prefix (CURLOPT_NOPROXY(3), curl 7.86), never by a name suffix.
            ("other.org, *", "https://anything.example/", false),
            ("0.1", "https://10.0.0.1/", false),
            ("3", "https://10.1.2.3/", false),
            ("10.0.0.0/8", "https://10.200.3.4/", true),
            ("10.0.0.0/8", "https://11.0.0.1/", false),
            ("192.168.0.0/23", "https://192.168.1.200/", true),
            ("192.168.0.0/23", "https://192.168.2.1/", false),
            ("10.1.2.3/0", "https://10.1.2.4/", false),
            ("2001:db8::/32", "https://[2001:db8:ffff::9]/", true),
            ("[2001:db8::]/32", "https://[2001:db8:ffff::9]/", true),
            ("2001:db8::/32", "https://[2001:db9::1]/", false),
            ("10.0.0.0/8", "https://10.example.com/", false),
            ("example.com", "https://10.0.0.1/", false),
        ]
    )
    func noProxy(_ noProxy: String, _ url: String, _ bypassed: Bool) throws {
        let proxy = try Self.proxy(url, ["HTTPS_PROXY": "http://p:3128", "NO_PROXY": noProxy])
        #expect((proxy == nil) == bypassed)
        #expect(try Self.proxy(url, ["HTTPS_PROXY": "http://p:3128", "no_proxy": noProxy]) == proxy)
    }
}
