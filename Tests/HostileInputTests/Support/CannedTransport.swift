import CredentialVault
import Foundation
import Logging

/// An ``HTTPTransport`` that answers every request from a function of the request, in memory: the client code
/// above the transport (status mapping, decoding, checks) runs as it does over the network, on 100,000 answers a
/// second instead of a few hundred. Like the real transports, it refuses an answer larger than the request allows.
struct CannedTransport: HTTPTransport {
    /// A logger that prints nothing: the run would otherwise log every one of its requests.
    static let quietLogger: Logger = {
        var logger = Logger(label: "hostile-input")
        logger.logLevel = .critical
        return logger
    }()

    let answer: @Sendable (HTTPRequest) -> HTTPResponse

    /// A transport that gives every request `response`.
    init(_ response: HTTPResponse) {
        answer = { _ in response }
    }

    /// A transport that answers each request with `answer(request)`.
    init(answering answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.answer = answer
    }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let response = answer(request)
        guard response.body.count <= request.maximumAnswerSize else {
            throw TransportError(kind: .answerTooLarge, host: request.url.host ?? "", reason: "the answer is too large")
        }
        return response
    }
}
