import Foundation
import Hummingbird
import KeyServiceCore
import NIOCore

extension Response {
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
