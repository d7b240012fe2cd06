import Foundation
import Hummingbird
import NIOCore

extension Response {
    private static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response; token and key responses must never be cached (RFC 6749 section 5.1).
    static func json(status: HTTPResponse.Status = .ok, _ value: some Encodable) -> Response {
        // Encoding our own string maps and structs of strings and numbers cannot fail.
        let data = (try? jsonEncoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// A JSON response of a document built with `JSONSerialization` (values of any JSON shape, such as a JWK Set
    /// echoed as the client sent it); never cached.
    static func json(status: HTTPResponse.Status = .ok, object: [String: Any]) -> Response {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// A FHIR JSON response (`application/fhir+json`).
    static func fhir(status: HTTPResponse.Status = .ok, _ value: some Encodable) -> Response {
        var response = json(status: status, value)
        response.headers[.contentType] = "application/fhir+json"
        return response
    }

    /// A plain-text response.
    static func text(status: HTTPResponse.Status = .ok, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }

    /// A 302 to `location`.
    static func redirect(to location: String) -> Response {
        Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
    }
}
