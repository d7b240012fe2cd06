import Foundation
import Hummingbird
import NIOCore

/// The largest request body any endpoint reads; a larger one is answered 400.
let maximumRequestBodySize = 16 * 1024

/// Why a request was refused before it reached any state: answered with a JSON error and a status.
struct RequestRefusal: Error {
    let status: HTTPResponse.Status
    let error: String
    let description: String

    static func invalidRequest(_ description: String) -> RequestRefusal {
        RequestRefusal(status: .badRequest, error: "invalid_request", description: description)
    }

    var response: Response {
        Response.json(status: status, ["error": error, "error_description": description])
    }
}

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

extension Request {
    /// The body, at most ``maximumRequestBodySize`` bytes.
    /// - Throws: ``RequestRefusal`` (400) for a larger body.
    mutating func collectLimitedBody() async throws -> Data {
        if let length = headers[.contentLength].flatMap({ Int($0) }), length > maximumRequestBodySize {
            throw RequestRefusal.invalidRequest("the request body is larger than 16 KiB")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: maximumRequestBodySize)
        } catch is NIOTooManyBytesError {
            throw RequestRefusal.invalidRequest("the request body is larger than 16 KiB")
        }
        return Data(buffer.readableBytesView)
    }

    /// The form fields of an `application/x-www-form-urlencoded` body.
    mutating func formFields() async throws -> FormFields {
        let body = try await collectLimitedBody()
        guard let text = String(data: body, encoding: .utf8) else {
            throw RequestRefusal.invalidRequest("the form body is not UTF-8")
        }
        return try FormFields(encoded: text)
    }

    /// The fields of the query string.
    func queryFields() throws -> FormFields {
        try FormFields(encoded: uri.query ?? "")
    }
}

/// Fields of a query string or form body; a field sent twice is refused (RFC 6749 section 3.1).
struct FormFields {
    private var values: [String: String] = [:]

    init(encoded: String) throws {
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : "") else {
                throw RequestRefusal.invalidRequest("a form field is not valid percent-encoding")
            }
            guard values[name] == nil else {
                throw RequestRefusal.invalidRequest("the parameter \(name) is sent more than once")
            }
            values[name] = value
        }
    }

    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// The value of `name`; an empty value counts as absent.
    subscript(name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// The value of `name`, which must be present.
    func required(_ name: String) throws -> String {
        guard let value = self[name] else {
            throw RequestRefusal.invalidRequest("the parameter \(name) is missing")
        }
        return value
    }
}
