package import Foundation
package import Hummingbird
import NIOCore

/// The largest request body any endpoint reads; a larger one is answered 400.
package let maximumRequestBodySize = 16 * 1024

extension Request {
    /// The body, at most ``maximumRequestBodySize`` bytes.
    /// - Throws: ``RequestRefusal`` (400) for a larger body.
    package mutating func collectLimitedBody() async throws -> Data {
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
}
