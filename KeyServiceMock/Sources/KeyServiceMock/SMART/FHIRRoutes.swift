import Foundation
import Hummingbird
import KeyServiceCore
import Logging

/// A tiny FHIR R4 server under the FHIR base: `GET Patient/{id}` and `GET Patient?_count=N`, for the
/// SMART mode's opaque access tokens.
///
/// The token's granted scope must allow the interaction (`r` to read, `s` to search) on Patient, in any
/// v1 or v2 form. A `patient/` scope is not limited to the patient in context: every patient is served.
struct FHIRRoutes: Sendable {
    let provider: IdentityProvider
    let mode: SMARTMode

    /// The page size of a search without `_count`.
    static let defaultCount = 10
    /// The largest page a search returns, whatever `_count` asks.
    static let maximumCount = 100

    func add(to router: Router<MockRequestContext>) {
        router.get(RouterPath(Layout.fhirBase + "/Patient/:id")) { request, context in
            try authorize(request, permission: "r", logger: context.logger)
            let id = context.parameters.get("id") ?? ""
            guard let number = patientNumber(id) else {
                throw FHIRRefusal.notFound("Patient/\(id) is not known")
            }
            return Response.fhir(Self.patient(number))
        }
        router.get(RouterPath(Layout.fhirBase + "/Patient")) { request, context in
            try authorize(request, permission: "s", logger: context.logger)
            return Response.fhir(try search(request))
        }
    }

    /// Checks the request's bearer token, and that its scope allows `permission` on Patient.
    private func authorize(_ request: Request, permission: Character, logger: Logger) throws {
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            throw FHIRRefusal.invalidToken("an access token is required: Authorization: Bearer TOKEN")
        }
        guard let token = provider.activeAccessToken(String(authorization.dropFirst("Bearer ".count))) else {
            throw FHIRRefusal.invalidToken("the access token is unknown, expired or revoked")
        }
        guard SMARTScope.scope(token.scope, allows: permission, on: "Patient") else {
            let interaction = permission == "r" ? "read" : "search"
            throw FHIRRefusal.forbidden("the granted scope does not allow \(interaction) on Patient")
        }
        logger.debug(
            "FHIR request authorized",
            metadata: ["client_id": "\(token.clientId)", "sid": "\(token.sessionId ?? "-")"]
        )
    }

    /// `n` for `p{n}` with `n` in 1...patientCount, written without leading zeros.
    private func patientNumber(_ id: String) -> Int? {
        guard id.hasPrefix("p"), let number = Int(id.dropFirst()), "p\(number)" == id,
            (1...mode.patientCount).contains(number)
        else { return nil }
        return number
    }

    /// A `searchset` Bundle of one page of patients, with `self` and (unless it is the last page) `next` links.
    private func search(_ request: Request) throws -> JSONValue {
        let fields = try request.queryFields()
        let count = try Self.integer(fields["_count"], named: "_count", minimum: 1) ?? Self.defaultCount
        let offset = try Self.integer(fields["_offset"], named: "_offset", minimum: 0) ?? 0
        let pageSize = min(count, Self.maximumCount)
        let total = mode.patientCount
        let page = offset < total ? Array((offset + 1)...min(offset + pageSize, total)) : []
        let base = provider.address.fhirBase
        func pageURL(_ offset: Int) -> JSONValue {
            .string("\(base)/Patient?_count=\(count)&_offset=\(offset)")
        }
        var links: [JSONValue] = [["relation": "self", "url": pageURL(offset)]]
        if offset + pageSize < total {
            links.append(["relation": "next", "url": pageURL(offset + pageSize)])
        }
        return [
            "resourceType": "Bundle",
            "type": "searchset",
            "total": .number(total),
            "link": .array(links),
            "entry": .array(
                page.map { number in
                    [
                        "fullUrl": .string("\(base)/Patient/p\(number)"),
                        "resource": Self.patient(number),
                        "search": ["mode": "match"],
                    ]
                }
            ),
        ]
    }

    private static func integer(_ text: String?, named name: String, minimum: Int) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), value >= minimum else {
            throw FHIRRefusal.invalid("\(name) must be a whole number of at least \(minimum)")
        }
        return value
    }

    /// Patient `p{number}`: the same content every time.
    static func patient(_ number: Int) -> JSONValue {
        [
            "resourceType": "Patient",
            "id": .string("p\(number)"),
            "name": [["family": .string("Mock\(number)"), "given": ["Pat"]]],
        ]
    }
}
