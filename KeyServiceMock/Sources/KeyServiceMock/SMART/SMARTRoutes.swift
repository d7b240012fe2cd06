import Foundation
import Hummingbird
import KeyServiceCore
import Logging

/// The SMART mode's discovery and launch endpoints: `.well-known/smart-configuration` and `metadata` under
/// the FHIR base, `POST /smart/ehr-launch` and the style sheet `smart_style_url` names.
struct SMARTRoutes: Sendable {
    let provider: IdentityProvider
    let mode: SMARTMode

    func add(to router: Router<MockRequestContext>, layout: Layout) {
        if mode.discovery == .wellKnown {
            router.get(RouterPath(Layout.fhirBase + "/.well-known/smart-configuration")) { _, _ in
                Response.json(configuration(layout: layout))
            }
        }
        router.get(RouterPath(Layout.fhirBase + "/metadata")) { _, _ in
            Response.fhir(capabilityStatement(layout: layout))
        }
        router.post(RouterPath(Layout.ehrLaunch)) { request, context in
            var request = request
            let body = try await request.collectLimitedBody()
            guard let launch = try? JSONDecoder().decode(EHRLaunchRequest.self, from: body), !launch.patient.isEmpty
            else {
                throw RequestRefusal.invalidRequest(
                    #"the body must be {"patient":"p3"} or {"patient":"p3","encounter":"e2"}"#
                )
            }
            let id = provider.smartStore.createLaunch(patient: launch.patient, encounter: launch.encounter)
            context.logger.debug("EHR launch created", metadata: ["patient": "\(launch.patient)"])
            return Response.json(["launch": id, "iss": provider.address.fhirBase])
        }
        router.get(RouterPath(Layout.smartStyle)) { _, _ in
            Response.json(Self.style)
        }
    }

    private func endpoint(_ relative: String, layout: Layout) -> String {
        provider.endpoint(relative, layout: layout)
    }

    private var capabilities: [String] {
        SMARTConfiguration.capabilities(of: mode, dynamicRegistration: provider.configuration.dynamicRegistration)
    }

    private var codeChallengeMethods: [String] {
        mode.offersS256 ? ["S256"] : ["plain"]
    }

    /// The smart-configuration; with backend clients, or with dynamic registration (a client may register
    /// `client_credentials` with `private_key_jwt`), it also offers that grant and method.
    func configuration(layout: Layout) -> SMARTConfiguration {
        let registration = provider.configuration.dynamicRegistration
        let backend = !mode.backendClients.isEmpty || registration
        return SMARTConfiguration(
            issuer: provider.issuer,
            jwksURI: endpoint(Layout.certs, layout: layout),
            authorizationEndpoint: endpoint(Layout.authorization, layout: layout),
            tokenEndpoint: endpoint(Layout.token, layout: layout),
            revocationEndpoint: endpoint(Layout.revocation, layout: layout),
            introspectionEndpoint: endpoint(Layout.introspection, layout: layout),
            registrationEndpoint: registration ? endpoint(Layout.registration, layout: layout) : nil,
            tokenEndpointAuthMethodsSupported: provider.tokenEndpointAuthMethods,
            tokenEndpointAuthSigningAlgValuesSupported: backend ? provider.backendServices.rules.accepted : nil,
            scopesSupported: SMARTConfiguration.supportedScopes + (backend ? SMARTConfiguration.systemScopes : []),
            responseTypesSupported: ["code"],
            grantTypesSupported: ["authorization_code", "refresh_token", "password"]
                + (backend ? ["client_credentials"] : []),
            capabilities: capabilities,
            codeChallengeMethodsSupported: codeChallengeMethods
        )
    }

    /// The FHIR R4 CapabilityStatement, with the OAuth endpoints in the `oauth-uris` extension that servers
    /// built for SMART App Launch 1 publish, and the capabilities as `capabilities` extensions.
    func capabilityStatement(layout: Layout) -> JSONValue {
        var uris: [JSONValue] = [
            ["url": "authorize", "valueUri": .string(endpoint(Layout.authorization, layout: layout))],
            ["url": "token", "valueUri": .string(endpoint(Layout.token, layout: layout))],
            ["url": "revoke", "valueUri": .string(endpoint(Layout.revocation, layout: layout))],
            ["url": "introspect", "valueUri": .string(endpoint(Layout.introspection, layout: layout))],
        ]
        if provider.configuration.dynamicRegistration {
            uris.append(["url": "register", "valueUri": .string(endpoint(Layout.registration, layout: layout))])
        }
        let oauthURIs: JSONValue = [
            "url": "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris",
            "extension": .array(uris),
        ]
        let capabilities = self.capabilities.map { capability -> JSONValue in
            [
                "url": "http://fhir-registry.smarthealthit.org/StructureDefinition/capabilities",
                "valueCode": .string(capability),
            ]
        }
        return [
            "resourceType": "CapabilityStatement",
            "status": "active",
            "date": "2026-01-01",
            "kind": "instance",
            "software": ["name": "KeyServiceMock"],
            "implementation": ["description": "KeyServiceMock SMART mode", "url": .string(provider.address.fhirBase)],
            "fhirVersion": "4.0.1",
            "format": ["json"],
            "rest": [
                [
                    "mode": "server",
                    "security": [
                        "service": [
                            [
                                "coding": [
                                    [
                                        "system": "http://terminology.hl7.org/CodeSystem/restful-security-service",
                                        "code": "SMART-on-FHIR",
                                    ]
                                ]
                            ]
                        ],
                        "extension": .array([oauthURIs] + capabilities),
                    ],
                    "resource": [
                        [
                            "type": "Patient",
                            "interaction": [["code": "read"], ["code": "search-type"]],
                            "searchParam": [["name": "_count", "type": "number"]],
                        ]
                    ],
                ]
            ],
        ]
    }

    /// The example style of SMART App Launch 2.2 ("styling").
    private static let style: [String: String] = [
        "color_background": "#edeae3", "color_error": "#9e2d2d", "color_highlight": "#69b5ce",
        "color_modal_backdrop": "", "color_success": "#498e49", "color_text": "#303030",
        "dim_border_radius": "6px", "dim_font_size": "13px", "dim_spacing_size": "20px",
        "font_family_body": "Georgia, Times, 'Times New Roman', serif",
        "font_family_heading": "'HelveticaNeue-Light', Helvetica, Arial, 'Lucida Grande', sans-serif",
    ]
}

/// The body of `POST /smart/ehr-launch`.
private struct EHRLaunchRequest: Decodable {
    let patient: String
    let encounter: String?
}
