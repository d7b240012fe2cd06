import Foundation
package import Hummingbird
import NIOCore

extension Response {
    private static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response; token and key responses must never be cached (RFC 6749 section 5.1).
    package static func json(status: HTTPResponse.Status = .ok, _ value: some Encodable) -> Response {
        // Encoding our own string maps and structs of strings and numbers cannot fail.
        let data = (try? jsonEncoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// A JSON response of a body already written (``FlatJSON``); never cached.
    static func json(status: HTTPResponse.Status = .ok, body: ByteBuffer) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: body)
        )
    }

    /// A JSON response of a document built with `JSONSerialization` (values of any JSON shape, such as a JWK Set
    /// echoed as the client sent it); never cached.
    package static func json(status: HTTPResponse.Status = .ok, object: [String: Any]) -> Response {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
