import Foundation
import PropertyBased
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault

/// The JWT decoder and its strict JSON parser under hostile tokens: every one decodes or is a ``JWTError`` (the
/// parser's own `Failure`), and no description of a token or of its error shows a segment of it.
@Suite("hostile input: the JWT decoder", .tags(.fuzz), .enabled(inTier: .fuzz))
struct JWTFuzzTests {
    private static func segment(_ text: String) -> String { Base64URL.encode(Data(text.utf8)) }

    private static func token(_ header: String, _ payload: String, _ signature: String = "c2lnbmF0dXJl") -> String {
        segment(header) + "." + segment(payload) + "." + signature
    }

    /// Valid tokens, then one or more of each hostile class.
    static let seeds: [String] = [
        // RFC 7519 section 3.1 (no sub: refused) and RFC 7515 appendix A.1's header.
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFt"
            + "cGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        token(
            #"{"alg":"RS256","kid":"k1","typ":"JWT"}"#,
            #"{"sub":"alice","iss":"https://issuer.example","aud":["vault","other"],"exp":1900000000,"#
                + #""iat":1700000000,"nbf":1700000000,"scope":"openid offline_access","login_provider":"tim","#
                + #""nested":{"a":[1,2,{"b":null}]},"azp":"vault"}"#
        ),
        token(#"{"alg":"ES256"}"#, #"{"sub":"bob","scope":["a","b"],"aud":"vault"}"#),
        // RFC 7519 section 6 / RFC 8725 section 2.1: unsecured tokens, with and without a signature.
        token(#"{"alg":"none"}"#, #"{"sub":"alice"}"#, ""),
        token(#"{"alg":"NoNe"}"#, #"{"sub":"alice"}"#, ""),
        token(#"{"alg":"none"}"#, #"{"sub":"alice"}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"alice"}"#, ""),
        // RFC 7515 section 5.2 / RFC 8725 section 3.10: duplicate members, at the top and nested.
        token(#"{"alg":"none","alg":"RS256"}"#, #"{"sub":"alice"}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"alice","sub":"mallory"}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"alice","x":{"a":1,"a":2}}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"alice","x":{"\u00e9":1,"e\u0301":2}}"#),
        // The many-dots class: splitting cost must not grow with the dots.
        "a.b.c.d", "...", String(repeating: ".", count: 200),
        "eyJhbGciOiJSUzI1NiJ9." + String(repeating: "x.", count: 500),
        // Deep nesting, huge numbers, numeric dates out of range, wrong claim types.
        token(
            #"{"alg":"RS256"}"#,
            #"{"sub":"a","x":"# + String(repeating: "[", count: 65) + String(repeating: "]", count: 65) + "}"
        ),
        token(#"{"alg":"RS256"}"#, #"{"sub":"a","exp":1e999}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"a","exp":-1}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"a","exp":253402300800}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"a","iat":"yesterday","aud":[1,2]}"#),
        token(#"{"alg":"RS256"}"#, #"{"sub":"a","n":123456789012345678901234567890123456789e300}"#),
        token(#"{"alg":5}"#, #"{"sub":""}"#),
        token(#"[]"#, #""sub""#),
        // Lone surrogates and invalid UTF-8 inside the segments; padding and the base64 alphabet's other letters.
        token(#"{"alg":"RS256"}"#, #"{"sub":"\ud800"}"#),
        segment(#"{"alg":"RS256"}"#) + "." + Base64URL.encode(Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]))
            + ".c2ln",
        segment(#"{"alg":"RS256"}"#) + "=." + segment(#"{"sub":"a"}"#) + ".c2ln",
        "eyJhbGciOiJSUzI1NiJ9+/.eyJzdWIiOiJhIn0.c2ln",
        "",
    ]

    /// What the header and claims set name.
    static let json = HostileJSON(
        names: [
            "alg", "kid", "typ", "crit", "sub", "iss", "aud", "exp", "nbf", "iat", "scope", "login_provider", "azp",
        ],
        strings: [
            "none", "NONE", "RS256", "HS256", "ES256", "alice", "openid offline_access", "https://issuer.example",
        ]
    )

    static func describe(_ token: String) -> String { HostileBytes.describe(Array(token.utf8)) }

    /// Tokens: a seed, mutated or not, or a header and a claims set of hostile JSON under any signature segment.
    static let tokens: Generator<String, Shrink.None<String>> = {
        let text = HostileInputs.bytes(seeds: seeds.map { Array($0.utf8) }, sizeCap: JWT.maximumLength)
        return Generator { rng in
            guard Int.random(in: 0..<3, using: &rng) == 0 else {
                return String(decoding: text.run(using: &rng), as: UTF8.self)
            }
            let header =
                Bool.random(using: &rng)
                ? Array(#"{"alg":"RS256"}"#.utf8)
                : HostileBytes.mutate(Array(#"{"alg":"none"}"#.utf8), others: [], using: &rng)
            let payload = json.document(using: &rng)
            let signature = [
                "", "c2lnbmF0dXJl", "c2ln=", "!!", Base64URL.encode(Data(HostileBytes.random(0...40, using: &rng))),
            ]
            .randomElement(using: &rng)!
            return Base64URL.encode(Data(header)) + "." + Base64URL.encode(Data(payload)) + "." + signature
        }
    }()

    @Test("every hostile token is a JWT or a JWTError; no description shows a segment of the token")
    func decoder() async throws {
        let run = HostileInputRun(parser: "jwt", suite: "JWTFuzzTests", settings: try .fromEnvironment())
        let report = await run.run(
            Self.tokens,
            refusal: JWTError.self,
            describe: Self.describe
        ) {
            token in
            let segments = token.split(separator: ".", omittingEmptySubsequences: false).filter { $0.count >= 16 }
                .map(String.init)
            let jwt: JWT
            do throws(JWTError) {
                jwt = try JWT(token: token)
            } catch {
                if segments.contains(where: { error.description.contains($0) }) {
                    throw HostileInputViolation("the JWTError's description shows a token segment")
                }
                throw error
            }
            // Every reader of a decoded token, so none of them traps on what the decoder let through.
            let shown = [jwt.description, jwt.debugDescription, String(describing: jwt.customMirror.children.count)]
            _ = (jwt.isExpired(), jwt.isNotYetValid(leeway: -1e300), jwt.isUnsecured, jwt.algorithm)
            let _: Date? = jwt["exp"]
            let _: Int? = jwt["iat"]
            let _: [String]? = jwt["aud"]
            let _: [String: JSONValue]? = jwt["nested"]
            if let leak = segments.first(where: { segment in shown.contains { $0.contains(segment) } }) {
                throw HostileInputViolation("a description shows a token segment of \(leak.count) characters")
            }
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }

    /// JSON text for the strict parser: hostile documents, mutated or not, and the seeds' decoded segments.
    static let documents = HostileInputs.bytes(
        seeds: [
            #"{"alg":"RS256","kid":"k1"}"#, #"{"a":{"b":[1,2.5e-3,-0,true,false,null,"\u00e9\ud83d\ude00"]}}"#,
            #"{"a":1,"a":2}"#, #" [ ] "#, "\"\\ud800\"", "1e400", "-", "0123",
            "[" + String(repeating: "[", count: 64) + "]",
        ].map { Array($0.utf8) } + [
            [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        ],
        json: json
    )

    @Test("every hostile JSON text is a value or the strict parser's typed failure")
    func strictJSON() async throws {
        let run = HostileInputRun(parser: "jwt-json", suite: "JWTFuzzTests", settings: try .fromEnvironment())
        let report = await run.run(
            Self.documents,
            refusal: StrictJSONParser.Failure.self,
            describe: HostileBytes.describe
        ) { bytes in
            _ = try StrictJSONParser.parse(bytes)
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }
}
