import Foundation
import Hummingbird
import NIOCore

/// The largest request body any endpoint reads; a larger one is answered 400.
let maximumRequestBodySize = 16 * 1024

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
