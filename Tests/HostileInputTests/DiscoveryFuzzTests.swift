import Foundation
import PropertyBased
import Testing
import VaultTestSupport

@testable import CredentialVault
@testable import CredentialVaultSMART

/// Discovery documents under hostile bodies: OpenID Connect discovery (with its RFC 8414 fallback), SMART's
/// `.well-known/smart-configuration` and the CapabilityStatement behind it, each through the real discovery code
/// over an in-memory transport. Every one is metadata whose endpoints are https or loopback, or a ``VaultError``.
@Suite("hostile input: discovery documents", .tags(.fuzz), .enabled(inTier: .fuzz))
struct DiscoveryFuzzTests {
    static let issuer = URL(string: "https://issuer.example/realms/a")!
    static let fhirBase = URL(string: "https://fhir.example/r4")!

    static let endpointStrings = [
        "https://issuer.example/realms/a", "https://issuer.example/realms/a/", "https://issuer.example/auth",
        "http://127.0.0.1:8080/token", "http://evil.example/token", "https://[::1]/x", "http://[::1]:9/t", "https://",
        "javascript:alert(1)", "//issuer.example/token", "https://issuer.example:99999/x",
        "https://user@evil.example@issuer.example/",
        "http://127.0.0.1.evil.example/", "http://0x7f000001/", "https://issuer.example/%00", "",
    ]

    static let openIDDocuments = HostileInputs.bytes(
        seeds: [
            #"{"issuer":"https://issuer.example/realms/a","authorization_endpoint":"https://issuer.example/realms/a/auth","#
                + #""token_endpoint":"https://issuer.example/realms/a/token","revocation_endpoint":"https://issuer.example/realms/a/revoke","#
                + #""introspection_endpoint":"https://issuer.example/i","end_session_endpoint":"https://issuer.example/logout","#
                + #""jwks_uri":"https://issuer.example/jwks","token_endpoint_auth_methods_supported":["none","private_key_jwt"],"#
                + #""authorization_response_iss_parameter_supported":true}"#,
            #"{"issuer":"https://issuer.example/realms/a","authorization_endpoint":"http://evil.example/auth","token_endpoint":"https://issuer.example/t"}"#,
            #"{"issuer":"https://other.example","authorization_endpoint":"https://issuer.example/a","token_endpoint":"https://issuer.example/t"}"#,
            #"{"issuer":"https://issuer.example/realms/a","issuer":"https://other.example","authorization_endpoint":"https://a.example/","token_endpoint":"https://a.example/t"}"#,
            #"{"issuer":"https://issuer.example/realms/a","authorization_endpoint":"not a url","token_endpoint":5}"#,
            #"{"issuer":null}"#, "{}", "[]", "",
        ].map { Array($0.utf8) },
        json: HostileJSON(
            names: [
                "issuer", "authorization_endpoint", "token_endpoint", "revocation_endpoint", "introspection_endpoint",
                "end_session_endpoint", "jwks_uri", "token_endpoint_auth_methods_supported",
                "revocation_endpoint_auth_methods_supported", "authorization_response_iss_parameter_supported",
            ],
            strings: endpointStrings
        ),
        sizeCap: HTTPRequest.defaultMaximumAnswerSize
    )

    static let openIDAnswers = ServerAnswerFuzzTests.answers(openIDDocuments)

    /// Every endpoint of `metadata` is one a secret may go to.
    static func check(_ endpoints: [URL?]) throws {
        for case let url? in endpoints where !url.isSecureOrLoopback {
            throw HostileInputViolation("an endpoint that is neither https nor loopback was taken")
        }
    }

    @Test("every hostile OpenID Connect discovery document is metadata or a VaultError")
    func openIDConnect() async throws {
        let run = HostileInputRun(
            parser: "oidc-discovery",
            suite: "DiscoveryFuzzTests",
            settings: try .fromEnvironment()
        )
        let report = await run.run(
            Self.openIDAnswers,
            refusal: VaultError.self,
            describe: ServerAnswerFuzzTests.describe,
            Self.openIDConnect
        )
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }

    /// One input of the `oidc-discovery` run: discovery over `response`, its endpoints checked.
    static func openIDConnect(_ response: HTTPResponse) async throws -> HostileInputOutcome {
        let discovery = Discovery(
            transport: CannedTransport(response),
            timeout: 5,
            logger: CannedTransport.quietLogger
        )
        let metadata = try await discovery.metadata(for: issuer)
        try check([
            metadata.authorizationEndpoint, metadata.tokenEndpoint, metadata.revocationEndpoint,
            metadata.introspectionEndpoint, metadata.endSessionEndpoint, metadata.jwksURI,
        ])
        return .accepted
    }

    static let smartDocuments = HostileInputs.bytes(
        seeds: [
            #"{"issuer":"https://fhir.example","jwks_uri":"https://fhir.example/jwks","authorization_endpoint":"https://fhir.example/auth","#
                + #""token_endpoint":"https://fhir.example/token","capabilities":["launch-standalone","permission-v2"],"#
                + #""code_challenge_methods_supported":["S256"],"scopes_supported":["openid"],"grant_types_supported":["authorization_code"]}"#,
            #"{"authorization_endpoint":"https://fhir.example/auth","token_endpoint":"http://evil.example/token"}"#,
            #"{"authorization_endpoint":"https://fhir.example/auth"}"#, #"{"capabilities":"launch-standalone"}"#,
        ].map { Array($0.utf8) },
        json: HostileJSON(
            names: [
                "issuer", "jwks_uri", "authorization_endpoint", "token_endpoint", "revocation_endpoint",
                "introspection_endpoint", "registration_endpoint", "management_endpoint", "capabilities",
                "code_challenge_methods_supported", "token_endpoint_auth_methods_supported", "scopes_supported",
                "grant_types_supported",
            ],
            strings: endpointStrings + ["S256", "plain", "launch-ehr"]
        ),
        sizeCap: HTTPRequest.defaultMaximumAnswerSize
    )

    static let capabilityStatements = HostileInputs.bytes(
        seeds: [
            #"{"resourceType":"CapabilityStatement","rest":[{"security":{"extension":[{"url":"http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris","#
                + #""extension":[{"url":"authorize","valueUri":"https://fhir.example/auth"},{"url":"token","valueUri":"https://fhir.example/token"},"#
                + #"{"url":"revoke","valueUri":"https://fhir.example/revoke"},{"url":"token","valueUri":"http://evil.example/t"}]}]}}]}"#,
            #"{"resourceType":"CapabilityStatement","rest":[{"security":{"extension":[{"url":"http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris","#
                + #""extension":[{"url":"authorize","valueUri":"javascript:x"},{"url":"token","valueUri":"http://evil.example/t"}]}]}}]}"#,
            #"{"resourceType":"Patient"}"#,
        ].map { Array($0.utf8) },
        json: HostileJSON(
            names: ["resourceType", "rest", "security", "extension", "url", "valueUri"],
            strings: endpointStrings + [
                "CapabilityStatement", SMARTDiscovery.oauthURIsExtension, "authorize", "token", "revoke", "register",
            ]
        ),
        sizeCap: HTTPRequest.defaultMaximumAnswerSize
    )

    /// Both SMART documents: the well-known one first, the CapabilityStatement when that fails.
    static let smartAnswers = Generator<[HTTPResponse], Shrink.None<[HTTPResponse]>> { rng in
        let first = ServerAnswerFuzzTests.answers(smartDocuments).run(using: &rng)
        let second = ServerAnswerFuzzTests.answers(capabilityStatements).run(using: &rng)
        return [first, second]
    }

    static func describe(_ answers: [HTTPResponse]) -> String {
        answers.map(ServerAnswerFuzzTests.describe).joined(separator: " then ")
    }

    @Test("every hostile smart-configuration and CapabilityStatement is a configuration or a VaultError")
    func smart() async throws {
        let run = HostileInputRun(
            parser: "smart-discovery",
            suite: "DiscoveryFuzzTests",
            settings: try .fromEnvironment()
        )
        let report = await run.run(Self.smartAnswers, refusal: VaultError.self, describe: Self.describe, Self.smart)
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }

    /// One input of the `smart-discovery` run: the well-known answer, then the CapabilityStatement answer.
    static func smart(_ answers: [HTTPResponse]) async throws -> HostileInputOutcome {
        let transport = CannedTransport { request in
            request.url.path().hasSuffix("smart-configuration") ? answers[0] : answers[1]
        }
        let discovery = SMARTDiscovery(transport: transport, timeout: 5, logger: CannedTransport.quietLogger)
        let configuration = try await discovery.configuration(for: fhirBase)
        try check([
            configuration.authorizationEndpoint, configuration.tokenEndpoint, configuration.revocationEndpoint,
            configuration.introspectionEndpoint, configuration.registrationEndpoint,
            configuration.managementEndpoint, configuration.jwksURI,
        ])
        return .accepted
    }
}
