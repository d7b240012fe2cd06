import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// Claims are untrusted text: in human output their terminal controls are escaped, so a token cannot clear
/// the screen, set the window title or reorder a line; JSON output carries every value exactly.
@Suite(
    "credential-vault: claims reach the terminal with their control characters escaped; JSON stays exact",
    .tags(.cli)
)
struct UntrustedTextTests {
    /// A payload whose strings hold an OSC (window title), CSI (clear screen), C1 introducers, DEL, a bidi
    /// override and a newline that would fake a line of output. Written as JSON text, escapes and all.
    static let hostilePayload = #"""
        {"sub":"mallory\u001b]0;owned\u0007\u001b[2J","name":"\u202eexe.txt","note":"\u009b31mred\u009d0;title\u009c","del":"a\u007fb","nl":"one\nexp  fake","list":["\u2067x\u2069"],"nested":{"k":"\u0085\u001b[1m"},"exp":4102444800}
        """#

    static let hostileHeader = #"{"alg":"HS256","typ":"JWT\u001b]2;title\u0007"}"#

    static func token(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String) -> String {
        ToolTests.base64URL(header) + "." + ToolTests.base64URL(payload) + "." + ToolTests.base64URL("signature")
    }

    /// The scalars a terminal may act on: C0 but newline, DEL, C1, and the bidirectional controls.
    static func terminalControls(in text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }
        .map { String(format: "U+%04X", $0.value) }
    }

    static func jsonObject(_ text: String) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
    }

    @Test("decode escapes ESC, C1, DEL, bidi overrides and newlines in claims and header; --json is exact")
    func decode() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let token = Self.token(header: Self.hostileHeader, payload: Self.hostilePayload)
            let human = try await sandbox.run(["decode", token])
            #expect(human.status == 0, "\(human.stderr)")
            #expect(Self.terminalControls(in: human.stdout).isEmpty, "\(Self.terminalControls(in: human.stdout))")
            #expect(human.stdout.contains(#"mallory\u{1B}]0;owned\u{7}\u{1B}[2J"#), "\(human.stdout)")
            #expect(human.stdout.contains(#"\u{202E}exe.txt"#))
            #expect(human.stdout.contains(#"\u{9B}31mred\u{9D}0;title\u{9C}"#))
            #expect(human.stdout.contains(#"one\nexp  fake"#), "a newline in a claim does not start a line")
            #expect(human.stdout.contains(#"JWT\u{1B}]2;title\u{7}"#))

            let json = try await sandbox.run(["decode", "--json", token])
            #expect(json.status == 0, "\(json.stderr)")
            #expect(Self.terminalControls(in: json.stdout).isEmpty, "JSON writes them as \\u escapes")
            let object = try Self.jsonObject(json.stdout)
            #expect(object["claims"] == .object(try Self.jsonObject(Self.hostilePayload)))
            #expect(object["header"] == .object(try Self.jsonObject(Self.hostileHeader)))
        }
    }

    @Test("decode says an exp claim that is not a NumericDate is malformed, not that there is no expiry")
    func malformedExpiry() async throws {
        try await withSandbox(withServer: false) { sandbox in
            for exp in [#""tomorrow""#, "1e20", "-5", "null"] {
                let result = try await sandbox.run(["decode", Self.token(payload: #"{"sub":"a","exp":\#(exp)}"#)])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout.contains("The exp claim is malformed"), "exp \(exp): \(result.stdout)")
                #expect(!result.stdout.contains("no expiry"), "exp \(exp): \(result.stdout)")
            }
            let absent = try await sandbox.run(["decode", Self.token(payload: #"{"sub":"a"}"#)])
            #expect(absent.stdout.contains("It has no expiry (no exp claim)."), "\(absent.stdout)")
        }
    }

    @Test("whoami and status escape a subject and claims from the issuer; whoami --json is exact")
    func whoami() async throws {
        let subject = "mallory\u{1B}]0;owned\u{07}\u{202E}resu"
        let provider = "\u{9B}2J\u{1B}[31mred\u{7F}"
        var server = KeyServiceMockConfiguration()
        server.users = [
            MockUser(username: "demo", password: "demo-password", subject: subject, loginProvider: provider)
        ]
        try await withSandbox(server: server) { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "correct horse\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            #expect(Self.terminalControls(in: register.stdout + register.stderr).isEmpty, "\(register)")

            let human = try await sandbox.run(["whoami", "--password-stdin"], stdin: "correct horse\n")
            #expect(human.status == 0, "\(human.stderr)")
            #expect(Self.terminalControls(in: human.stdout).isEmpty, "\(Self.terminalControls(in: human.stdout))")
            #expect(human.stdout.contains(#"mallory\u{1B}]0;owned\u{7}\u{202E}resu"#), "\(human.stdout)")
            #expect(human.stdout.contains(#"\u{9B}2J\u{1B}[31mred\u{7F}"#), "\(human.stdout)")

            let json = try await sandbox.run(["whoami", "--json", "--password-stdin"], stdin: "correct horse\n")
            #expect(json.status == 0, "\(json.stderr)")
            #expect(Self.terminalControls(in: json.stdout).isEmpty)
            let claims = try Self.jsonObject(json.stdout)
            #expect(claims["sub"] == .string(subject))
            #expect(claims["login_provider"] == .string(provider))

            let status = try await sandbox.run(["status"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(Self.terminalControls(in: status.stdout).isEmpty, "\(status.stdout)")
            #expect(status.stdout.contains(#"mallory\u{1B}]0;owned\u{7}\u{202E}resu"#), "\(status.stdout)")
        }
    }
}
