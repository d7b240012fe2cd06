import Foundation
import PropertyBased
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault

/// The issuer's JWK Set under hostile bodies, read by ``ProviderKeys`` and used by the id-token check (jwt-kit builds
/// the key): every one gives a key whose signature check refuses the forged token, or a ``VaultError``.
@Suite("hostile input: JWKS", .tags(.fuzz), .enabled(inTier: .fuzz))
struct JWKSFuzzTests {
    /// RFC 7517 appendix A.1's public keys and RFC 8037 appendix A.2's, and keys of every broken shape.
    static let rsa =
        #"{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#
    static let ec =
        #"{"kty":"EC","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM","use":"sig","kid":"1"}"#
    static let okp = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"ed"}"#

    static let seeds: [[UInt8]] = [
        #"{"keys":[\#(rsa),\#(ec),\#(okp)]}"#,
        #"{"keys":[\#(rsa),\#(rsa)]}"#,
        #"{"keys":[{"kty":"RSA","n":"AA","e":"AA","kid":"2011-04-29"}]}"#,
        #"{"keys":[{"kty":"RSA","n":"\#(String(repeating: "_w", count: 3000))","e":"AQAB"}]}"#,
        #"{"keys":[{"kty":"RSA","n":"0vx7","e":"\#(String(repeating: "A", count: 600))"}]}"#,
        #"{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA","kid":"1"}]}"#,
        #"{"keys":[{"kty":"EC","crv":"P-521","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]}"#,
        #"{"keys":[{"kty":"OKP","crv":"Ed448","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#,
        #"{"keys":[{"kty":"oct","k":"c2VjcmV0","alg":"HS256"}]}"#,
        #"{"keys":[\#(ec.replacingOccurrences(of: "\"use\":\"sig\"", with: "\"use\":\"enc\""))]}"#,
        #"{"keys":{}}"#, #"{"keys":null}"#, #"{"keys":[1,"a",null,[]]}"#, "{}", "",
    ].map { Array($0.utf8) }

    static let json = HostileJSON(
        names: ["keys", "kty", "n", "e", "crv", "x", "y", "d", "k", "kid", "alg", "use", "key_ops", "x5c"],
        strings: [
            "RSA", "EC", "OKP", "oct", "P-256", "P-384", "Ed25519", "RS256", "ES256", "EdDSA", "sig", "enc", "AQAB",
            "2011-04-29", "1", "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4",
            "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
        ]
    )

    static let keySets = ServerAnswerFuzzTests.answers(
        HostileInputs.bytes(seeds: seeds, json: json, sizeCap: HTTPRequest.defaultMaximumAnswerSize)
    )

    /// A forged id token of `algorithm`, naming `kid` when there is one.
    static func idToken(_ algorithm: String, kid: String?) -> String {
        let header = kid.map { #"{"alg":"\#(algorithm)","kid":"\#($0)"}"# } ?? #"{"alg":"\#(algorithm)"}"#
        let payload =
            #"{"sub":"alice","iss":"https://issuer.example","aud":"vault","exp":1900000000,"iat":1700000000,"nonce":"n"}"#
        return Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8)) + "."
            + Base64URL.encode(Data(repeating: 0x5A, count: algorithm.hasPrefix("E") ? 64 : 256))
    }

    /// A forged id token for each algorithm and key id: the key set decides which key its check takes.
    static let idTokens: [String] = ["RS256", "PS384", "ES256", "ES384", "EdDSA"].flatMap { algorithm in
        [nil, "2011-04-29", "1", "ed"].map { idToken(algorithm, kid: $0) }
    }

    /// The members of each seed key, in order, and the algorithms a token signed with it names.
    static let keyMembers: [(members: [(String, String)], algorithms: [String])] = [
        (
            [
                ("kty", "RSA"),
                (
                    "n",
                    "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
                ), ("e", "AQAB"), ("alg", "RS256"), ("kid", "k"),
            ], ["RS256", "RS384", "PS256", "PS512"]
        ),
        (
            [
                ("kty", "EC"), ("crv", "P-256"), ("x", "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4"),
                ("y", "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"), ("use", "sig"), ("kid", "k"),
            ], ["ES256", "ES384"]
        ),
        (
            [("kty", "OKP"), ("crv", "Ed25519"), ("x", "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"), ("kid", "k")],
            ["EdDSA"]
        ),
    ]

    /// Values a key member is replaced with: key material of every wrong length (empty, one byte, one short and
    /// one over a curve's size, 8192-bit and longer moduli, an exponent of zero or past 64 bits), other types,
    /// other curves and key types.
    static let memberValues: [String] =
        [0, 1, 31, 32, 33, 48, 57, 64, 65, 256, 1024, 2048].map {
            "\"" + Base64URL.encode(Data(repeating: 0xC3, count: $0)) + "\""
        } + [
            #""AA""#, #""AQAB""#, #""AAAAAAAAAAAAAAAAAAE""#, #""_w""#, #""=""#, #""P-384""#, #""P-521""#,
            #""secp256k1""#,
            #""X25519""#, #""Ed448""#, #""RSA""#, #""EC""#, #""OKP""#, #""oct""#, #""enc""#, #""ES256""#, #""none""#,
            "null",
            "1", "-1", "1e999", "[]", "{}", #"["AQAB"]"#, "true",
        ]

    /// Key sets built member by member from the seed keys, one or more members replaced, dropped or doubled, with a
    /// token whose algorithm and key id select a key of the set: these reach jwt-kit's key construction and the
    /// signature check, which most byte-level mutations of a key set do not.
    static let structuredInputs = Generator<(HTTPResponse, String), Shrink.None<(HTTPResponse, String)>> { rng in
        var keys: [String] = []
        var token = ""
        for index in 0..<Int.random(in: 1...3, using: &rng) {
            let (seedMembers, algorithms) = keyMembers.randomElement(using: &rng)!
            var members = seedMembers.map { ($0.0, "\"\($0.1)\"") }
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let position = Int.random(in: 0..<members.count, using: &rng)
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: members.remove(at: position)
                case 1: members.append(members[position])
                default: members[position].1 = memberValues.randomElement(using: &rng)!
                }
                if members.isEmpty { break }
            }
            keys.append("{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
            if index == 0 {
                token = idToken(algorithms.randomElement(using: &rng)!, kid: Bool.random(using: &rng) ? "k" : nil)
            }
        }
        return (HTTPResponse(status: 200, body: Data(#"{"keys":[\#(keys.joined(separator: ","))]}"#.utf8)), token)
    }

    static let inputs = Generator<(HTTPResponse, String), Shrink.None<(HTTPResponse, String)>> { rng in
        if Bool.random(using: &rng) { return structuredInputs.run(using: &rng) }
        return (keySets.run(using: &rng), idTokens.randomElement(using: &rng)!)
    }

    static func describe(_ input: (HTTPResponse, String)) -> String {
        "\(ServerAnswerFuzzTests.describe(input.0)), token \(input.1)"
    }

    @Test("every hostile JWK Set gives a key that refuses a forged id token, or a VaultError")
    func keySet() async throws {
        let run = HostileInputRun(parser: "jwks", suite: "JWKSFuzzTests", settings: try .fromEnvironment())
        let verifier = IDTokenVerifier(issuer: "https://issuer.example", clientId: "vault", leeway: 0)
        let report = await run.run(
            Self.inputs,
            refusal: VaultError.self,
            describe: Self.describe
        ) { response, idToken in
            let keys = ProviderKeys(
                url: URL(string: "https://issuer.example/jwks")!,
                transport: CannedTransport(response),
                timeout: 5,
                logger: CannedTransport.quietLogger
            )
            _ = try await verifier.verify(
                idToken,
                nonce: "n",
                keys: keys,
                now: Date(timeIntervalSince1970: 1_800_000_000)
            )
            throw HostileInputViolation("an id token with a forged signature was accepted")
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }
}
