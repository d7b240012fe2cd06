import Foundation
import PropertyBased
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault

/// The answers of the key service and of the token endpoint under hostile bodies and statuses, through the real
/// clients over an in-memory transport: every one is a key or a token response, or a ``VaultError``.
@Suite("hostile input: key-service and token-endpoint answers", .tags(.fuzz), .enabled(inTier: .fuzz))
struct ServerAnswerFuzzTests {
    /// A status (200 most of the time: the one whose body is decoded) and a body.
    static func answers(
        _ body: Generator<[UInt8], Shrink.None<[UInt8]>>
    ) -> Generator<HTTPResponse, Shrink.None<HTTPResponse>> {
        Generator { rng in
            let status =
                Int.random(in: 0..<4, using: &rng) == 0
                ? [204, 400, 401, 403, 404, 429, 500, 503, 302, 100, 0, -1, 999].randomElement(using: &rng)! : 200
            return HTTPResponse(status: status, body: Data(body.run(using: &rng)))
        }
    }

    static func describe(_ response: HTTPResponse) -> String {
        "HTTP \(response.status), body \(HostileBytes.describe(Array(response.body)))"
    }

    static let keyAnswers = answers(
        HostileInputs.bytes(
            seeds: [
                #"{"keyid":"6b1c1f0e-52a5-4c3b-9a49-8d3c2f6f0a11","key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","longsecret":"bG9uZw"}"#,
                #"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw=="}"#, #"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw"}"#,
                #"{"keyid":"","key":"AAECAwQFBgcICQoLDA0ODw=="}"#, #"{"keyid":"k","key":"AA=="}"#,
                #"{"keyid":"k","key":"AAECAwQFBgcICQoLDA0ODw==","keyid":"other"}"#,
                #"{"keyid":1,"key":["AAECAwQFBgcICQoLDA0ODw=="],"longsecret":null}"#, "null", "{}", "",
                #"{"keyid":"k","key":""# + String(repeating: "QUFB", count: 4096) + #""}"#,
            ].map { Array($0.utf8) },
            json: HostileJSON(
                names: ["keyid", "key", "longsecret"],
                strings: ["k", "AAECAwQFBgcICQoLDA0ODw==", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "===="]
            ),
            sizeCap: HTTPRequest.defaultMaximumAnswerSize
        )
    )

    @Test("every hostile key-service answer is a key or a VaultError")
    func keyService() async throws {
        let run = HostileInputRun(
            parser: "key-service",
            suite: "ServerAnswerFuzzTests",
            settings: try .fromEnvironment()
        )
        let secret = SecureBytes(Array("c2VjcmV0".utf8))
        let report = await run.run(Self.keyAnswers, refusal: VaultError.self, describe: Self.describe) { response in
            let service = try HTTPKeyService(
                baseURL: URL(string: "http://127.0.0.1:9/keyservice/v1")!,
                transport: CannedTransport(response),
                logger: CannedTransport.quietLogger
            )
            let key: KeyServiceKey
            switch response.body.count % 3 {
            case 0: key = try await service.getKey(keyId: "k", secret: secret)
            case 1: key = try await service.getKey(keyId: "k", longSecret: secret)
            default: key = try await service.createKey(secret: secret)
            }
            guard (16...64).contains(key.key.count), !key.keyId.isEmpty else {
                throw HostileInputViolation("a key of \(key.key.count) bytes or an empty key id was taken")
            }
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }

    static let tokenAnswers = answers(
        HostileInputs.bytes(
            seeds: [
                #"{"access_token":"at","token_type":"Bearer","expires_in":300,"refresh_token":"rt","id_token":"a.b.c","scope":"openid","patient":"123"}"#,
                #"{"access_token":"at","expires_in":"300"}"#, #"{"access_token":"at","expires_in":1e999}"#,
                #"{"access_token":"at","expires_in":-5,"refresh_token":""}"#, #"{"access_token":""}"#,
                #"{"access_token":"at","access_token":"other"}"#,
                #"{"error":"invalid_grant","error_description":"gone"}"#,
                #"{"error":"invalid_client"}"#,
                #"{"access_token":"at","app_context_x":1,"fhirContext":[{"reference":"Patient/1"}]}"#,
                "rt-refresh-token-echoed-back", "", "[]",
            ].map { Array($0.utf8) },
            json: HostileJSON(
                names: [
                    "access_token", "token_type", "expires_in", "refresh_token", "id_token", "scope", "error",
                    "error_description", "patient", "refresh_expires_in",
                ],
                strings: ["at", "Bearer", "300", "invalid_grant", "openid offline_access", "rt-refresh-token"]
            ),
            sizeCap: HTTPRequest.defaultMaximumAnswerSize
        )
    )

    @Test("every hostile token-endpoint answer is a token response or a VaultError")
    func tokenEndpoint() async throws {
        let run = HostileInputRun(
            parser: "token-endpoint",
            suite: "ServerAnswerFuzzTests",
            settings: try .fromEnvironment()
        )
        let report = await run.run(Self.tokenAnswers, refusal: VaultError.self, describe: Self.describe) { response in
            let endpoint = TokenEndpoint(
                url: URL(string: "http://127.0.0.1:9/token")!,
                clientId: "vault",
                authentication: .none,
                supportedMethods: nil,
                now: { Date(timeIntervalSince1970: 1_700_000_000) },
                transport: CannedTransport(response),
                timeout: 5,
                logger: CannedTransport.quietLogger
            )
            let answer = try await endpoint.refresh("rt-refresh-token-for-fuzzing")
            guard !answer.accessToken.isEmpty,
                answer.expiresIn.map({ (0...TokenEndpoint.maximumLifetime).contains($0) }) ?? true,
                !answer.context.keys.contains(where: TokenEndpoint.fieldsNotKept.contains)
            else {
                throw HostileInputViolation(
                    "a token response with an empty token, a wild lifetime or a kept token field"
                )
            }
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }
}
