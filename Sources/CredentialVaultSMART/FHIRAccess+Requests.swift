public import CredentialVault
public import Foundation
import Logging

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// FHIR requests with an always-fresh access token: read, search with paging, raw GET. Resources come back as
/// JSON (``JSONValue``); decode them into your own types, no FHIR model library needed.
extension FHIRAccess {

    /// The JSON resource at `path`, relative to the FHIR base (`Patient/123`).
    /// - Throws: ``VaultError``: `isAccessDenied` on a 403 (the granted scope does not cover it), `.serverRefused`
    ///   with ``VaultError/httpStatus`` for another error answer, `.unexpectedAnswer` for a body that is not JSON.
    public func getJSON(at path: String) async throws(VaultError) -> JSONValue {
        try await json(at: try url(for: path))
    }

    /// The `type` resource with `id` (`read`).
    public func read(_ type: String, id: String) async throws(VaultError) -> JSONValue {
        guard !type.isEmpty, !id.isEmpty, !"\(type)\(id)".contains("/") else {
            throw VaultError(.invalidConfiguration, reason: "A FHIR read needs a resource type and an id.")
        }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-."))
        guard type.unicodeScalars.allSatisfy(CharacterSet.letters.contains),
            let encoded = id.addingPercentEncoding(withAllowedCharacters: allowed)
        else {
            throw VaultError(.invalidConfiguration, reason: "A FHIR read needs a resource type of letters and an id.")
        }
        return try await getJSON(at: "\(type)/\(encoded)")
    }

    /// A search (`Patient?_count=5`): the searchset Bundle of the first page, or, with `allPages`, of every page,
    /// following each Bundle's `link` with relation `next` (only to URLs under the FHIR base: the access token goes
    /// nowhere else).
    /// - Returns: the Bundles in order.
    public func search(_ query: String, allPages: Bool = false) async throws(VaultError) -> [JSONValue] {
        var next: URL? = try url(for: query)
        var bundles: [JSONValue] = []
        while let page = next {
            guard bundles.count < FHIRConnection.maximumPages else {
                throw VaultError(
                    .unexpectedAnswer,
                    reason: "The FHIR server's search \(VaultError.printable(query, limit: 200)) went on for more than "
                        + "\(FHIRConnection.maximumPages) pages; stopped there.",
                    host: fhirBase.displayHost
                )
            }
            let bundle = try await json(at: page)
            guard bundle["resourceType"]?.stringValue == "Bundle" else {
                throw VaultError(
                    .unexpectedAnswer,
                    reason:
                        "The FHIR server answered the search \(VaultError.printable(query, limit: 200)) with no Bundle.",
                    host: fhirBase.displayHost
                )
            }
            bundles.append(bundle)
            guard allPages else { break }
            let link = bundle["link"]?.arrayValue?.first { $0["relation"]?.stringValue == "next" }
            next = try link?["url"]?.stringValue.map { text throws(VaultError) in try url(for: text) }
        }
        return bundles
    }

    /// `request` with a fresh access token: `Authorization: Bearer <token>`, or for a token bound to the login's key
    /// (DPoP, RFC 9449) `Authorization: DPoP <token>` and a `DPoP` proof for the request's method and URL.
    /// - Throws: ``VaultError`` `.invalidConfiguration` when the request's URL is not under ``fhirBase``: the access
    ///   token goes nowhere else.
    public func authorizing(_ request: URLRequest) async throws(VaultError) -> URLRequest {
        guard let url = request.url, isUnderBase(url) else {
            throw .outsideFHIRBase(
                "to authorize a request to",
                request.url?.absoluteString ?? "",
                fhirBase: fhirBase,
                host: request.url?.displayHost
            )
        }
        var request = request
        let token = try await getAccessToken(forceRefresh: false)
        request.setValue("\(token.tokenType) \(token.token)", forHTTPHeaderField: "Authorization")
        if let proof = try await dpopProof(method: request.httpMethod ?? "GET", url: url, accessToken: token) {
            request.setValue(proof, forHTTPHeaderField: "DPoP")
        }
        return request
    }

    /// The body of a GET of `path` (relative to the FHIR base), with `accept`; for binaries and documents.
    public func getData(from path: String, accept: String = "application/fhir+json") async throws(VaultError) -> Data {
        try await get(try url(for: path), accept: accept).body
    }

    // MARK: Requests

    private func json(at url: URL) async throws(VaultError) -> JSONValue {
        let response = try await get(url, accept: "application/fhir+json")
        guard
            let json = try? UntrustedJSON.decode(
                JSONValue.self,
                from: response.body,
                maximumSize: FHIRConnection.maximumAnswerSize
            )
        else {
            throw VaultError(
                .unexpectedAnswer,
                reason:
                    "The FHIR server answered GET \(VaultError.printable(url.relativePath(from: fhirBase), limit: 200)) "
                    + "with a body that is not JSON.",
                host: url.displayHost,
                httpStatus: response.status
            )
        }
        return json
    }

    /// A GET with a fresh access token; a 401 that asks for a DPoP nonce is sent once more with it (RFC 9449 section
    /// 9); a 401 that challenges the token (`WWW-Authenticate`) refreshes once and tries again.
    private func get(_ url: URL, accept: String) async throws(VaultError) -> HTTPResponse {
        let token = try await getAccessToken(forceRefresh: false)
        var response = try await send(url, accept: accept, token: token)
        if await rememberDPoPNonce(from: response, for: url) {
            fhirConnection.logger.debug("the FHIR server asked for a DPoP nonce; sending the request once more")
            response = try await send(url, accept: accept, token: token)
            _ = await rememberDPoPNonce(from: response, for: url)
        }
        if response.status == 401, response.headers["www-authenticate"] != nil {
            fhirConnection.logger.debug("the FHIR server refused the access token; refreshing it once")
            response = try await send(url, accept: accept, token: try await getAccessToken(forceRefresh: true))
        }
        guard (200..<300).contains(response.status) else { throw refusal(response, url: url) }
        return response
    }

    private func send(_ url: URL, accept: String, token: AccessToken) async throws(VaultError) -> HTTPResponse {
        var headers = ["Accept": accept, "Authorization": "\(token.tokenType) \(token.token)"]
        if let proof = try await dpopProof(method: "GET", url: url, accessToken: token) { headers["DPoP"] = proof }
        let request = HTTPRequest(
            method: "GET",
            url: url,
            headers: headers,
            timeout: fhirConnection.timeout,
            maximumAnswerSize: FHIRConnection.maximumAnswerSize
        )
        do {
            return try await fhirConnection.transport.send(request, logger: fhirConnection.logger)
        } catch {
            throw .network(error, service: "the FHIR server", origin: .issuer)
        }
    }

    private func refusal(_ response: HTTPResponse, url: URL) -> VaultError {
        let path = VaultError.printable(url.relativePath(from: fhirBase), limit: 200)
        // An OperationOutcome's first diagnostics or text, cut to printable ASCII.
        let outcome = try? UntrustedJSON.decode(
            JSONValue.self,
            from: response.body,
            maximumSize: FHIRConnection.maximumAnswerSize
        )
        let issue = outcome?["issue"]?.arrayValue?.first
        let said =
            (issue?["diagnostics"]?.stringValue ?? issue?["details"]?["text"]?.stringValue)
            .map { ": \(VaultError.printable($0, limit: 200))" } ?? ""
        if response.status == 403 {
            return VaultError(
                .accessDenied,
                reason: "The FHIR server refused GET \(path) (HTTP 403): the granted scope does not cover this\(said).",
                host: url.displayHost,
                httpStatus: 403
            )
        }
        let advice =
            response.status == 401 ? " The access token was refused even after a refresh: log in again." : ""
        return VaultError(
            .serverRefused,
            reason: "The FHIR server answered GET \(path) with HTTP \(response.status)\(said).\(advice)",
            host: url.displayHost,
            httpStatus: response.status
        )
    }

    /// The URL of `path`: relative to the FHIR base (`Patient?_count=5`), or absolute under it (a `next` link).
    /// Anything that leaves the FHIR base is refused, so the access token is never sent elsewhere.
    func url(for path: String) throws(VaultError) -> URL {
        let absolute = URL(string: path).flatMap { $0.scheme == nil ? nil : $0 }
        let base = fhirBase.absoluteString.hasSuffix("/") ? fhirBase.absoluteString : fhirBase.absoluteString + "/"
        let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard let url = absolute ?? URL(string: base + relative), isUnderBase(url) else {
            throw .outsideFHIRBase("the FHIR path", path, fhirBase: fhirBase, host: fhirBase.displayHost)
        }
        return url
    }

    /// Whether `url` is the FHIR base or below it: the same scheme, host and port, no user info, and a path that,
    /// decoded, is the base's path or under it with no `.` or `..` segment, encoded slash or backslash (which some
    /// servers resolve to another path).
    nonisolated func isUnderBase(_ url: URL) -> Bool {
        guard let target = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let base = URLComponents(url: fhirBase, resolvingAgainstBaseURL: false),
            target.scheme?.lowercased() == base.scheme?.lowercased(),
            target.host?.lowercased() == base.host?.lowercased(),
            Self.port(target) == Self.port(base), target.user == nil, target.password == nil
        else { return false }
        let encoded = target.percentEncodedPath
        guard !encoded.lowercased().contains("%2f"), !encoded.lowercased().contains("%5c"),
            let decoded = encoded.removingPercentEncoding, !decoded.contains("\\")
        else { return false }
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else { return false }
        var basePath = base.path
        if basePath.hasSuffix("/") { basePath.removeLast() }
        return decoded == basePath || decoded == basePath + "/" || decoded.hasPrefix(basePath + "/")
    }

    nonisolated static func port(_ components: URLComponents) -> Int? {
        components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
    }
}

extension URL {
    /// This URL's path and query after `base`, for messages.
    fileprivate func relativePath(from base: URL) -> String {
        let text = absoluteString
        return text.hasPrefix(base.absoluteString) ? String(text.dropFirst(base.absoluteString.count)) : path()
    }
}
