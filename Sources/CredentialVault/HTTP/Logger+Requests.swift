import Foundation
package import Logging

extension Logger {
    /// One request and what came of it, at debug: method, host, path and status or failure; never a query,
    /// a header or a body (they carry codes, tokens and secrets).
    func request(_ request: HTTPRequest, _ outcome: Result<HTTPResponse, TransportError>) {
        // The line is at .debug: below that, building its fields (two URL reads, four strings) is all it would cost.
        guard logLevel <= .debug else { return }
        var metadata: Metadata = [
            "method": "\(request.method)",
            "host": "\(request.url.displayHost)",
            "path": "\(request.url.path(percentEncoded: true))",
        ]
        switch outcome {
        case .success(let response): metadata["status"] = "\(response.status)"
        case .failure(let error): metadata["failure"] = "\(error.kind): \(error.reason)"
        }
        debug("HTTP request", metadata: metadata)
    }
}

extension HTTPTransport {
    /// Sends `request`, logging it with ``Logging/Logger/request(_:_:)``.
    package func send(_ request: HTTPRequest, logger: Logger) async throws(TransportError) -> HTTPResponse {
        do {
            let response = try await send(request)
            logger.request(request, .success(response))
            return response
        } catch {
            logger.request(request, .failure(error))
            throw error
        }
    }
}
