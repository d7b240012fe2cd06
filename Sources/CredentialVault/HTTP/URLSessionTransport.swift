#if canImport(Darwin)
import Foundation
import Synchronization

/// ``HTTPTransport`` over Foundation's URLSession: the default on Apple platforms (Linux uses
/// ``AsyncHTTPClientTransport``). Does not follow redirects, keeps no cookies and no cache, and refuses an answer
/// body over the request's ``HTTPRequest/maximumAnswerSize``.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate = SessionTaskDelegate()

    /// The transport ``DefaultHTTPTransport`` hands out on Apple platforms: one session for the process.
    public static let shared = URLSessionTransport()

    /// A transport with an ephemeral session of its own.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` once on the session: redirects not followed, the request's ``HTTPRequest/timeout`` enforced
    /// by a timer, an answer over ``HTTPRequest/maximumAnswerSize`` refused.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        var prepared = URLRequest(url: request.url, timeoutInterval: request.timeout)
        prepared.httpMethod = request.method
        for (name, value) in request.headers { prepared.setValue(value, forHTTPHeaderField: name) }
        prepared.httpBody = request.body
        let host = request.url.displayHost

        // FoundationNetworking does not enforce the request's timeout on every path, and cancelling a task
        // from a Swift cancellation handler can deadlock it; so a dispatch timer cancels the task instead,
        // and whichever of the answer and the timer comes first settles the call.
        //
        // FoundationNetworking's dataTask(with:) and resume() wait for the session's own queue. That wait
        // happens on a dispatch thread, never on one of Swift's cooperative threads (as few as the machine has
        // cores): a busy process whose cooperative threads all wait there serves no other task meanwhile,
        // an in-process server's answers included.
        let session = session
        let timeout = request.timeout
        let urlRequest = prepared
        let taskIdentifier = Mutex<Int?>(nil)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let settle = SettleOnce(continuation)
            DispatchQueue.global().async {
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    settle.resume(.answered(data, response, error))
                }
                taskIdentifier.withLock { $0 = task.taskIdentifier }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                    if settle.resume(.timedOut) { task.cancel() }
                }
            }
        }
        // A 401 that challenged URLSession (WWW-Authenticate) ends as a cancellation: it is the answer, without a body.
        if case .answered(_, _, let error as URLError) = outcome, error.code == .cancelled,
            let identifier = taskIdentifier.withLock({ $0 }),
            let challenged = delegate.takeChallengedResponse(of: identifier)
        {
            return HTTPResponse(status: challenged.statusCode, headers: Self.headers(of: challenged), body: Data())
        }
        switch outcome {
        case .timedOut:
            throw TransportError(
                kind: .timedOut,
                host: host,
                reason: "no answer within \(Self.seconds(request.timeout))"
            )
        case .answered(_, _, let error as URLError) where error.code == .timedOut:
            throw TransportError(
                kind: .timedOut,
                host: host,
                reason: "no answer within \(Self.seconds(request.timeout))"
            )
        case .answered(_, _, let error as URLError):
            let neverSent: Set<URLError.Code> = [
                .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
            ]
            let kind: TransportError.Kind = neverSent.contains(error.code) ? .notConnected : .noResponse
            throw TransportError(kind: kind, host: host, reason: Self.reason(error))
        case .answered(_, _, _?):
            throw TransportError(kind: .noResponse, host: host, reason: "the connection failed")
        case .answered(let data, let response, nil):
            guard let http = response as? HTTPURLResponse else {
                throw TransportError(kind: .noResponse, host: host, reason: "the answer was not HTTP")
            }
            // URLSession's completion handler hands over the whole body: the limit is checked on it, so an
            // answer over it is refused, though it was read (see HTTPRequest.maximumAnswerSize).
            let body = data ?? Data()
            guard body.count <= request.maximumAnswerSize else {
                throw TransportError(
                    kind: .answerTooLarge,
                    host: host,
                    reason: "the answer is larger than \(Self.bytes(request.maximumAnswerSize)), the most accepted"
                )
            }
            return HTTPResponse(status: http.statusCode, headers: Self.headers(of: http), body: body)
        }
    }

    /// The response's header fields, by lower-case name.
    private static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return headers
    }

    private enum Outcome: @unchecked Sendable {
        // @unchecked Sendable: the values are handed over once, from URLSession's queue to the waiting task.
        case answered(Data?, URLResponse?, (any Error)?)
        case timedOut
    }

    /// Resumes a continuation exactly once, whoever comes first.
    private final class SettleOnce: Sendable {
        private let continuation: Mutex<CheckedContinuation<Outcome, Never>?>

        init(_ continuation: CheckedContinuation<Outcome, Never>) {
            self.continuation = Mutex(continuation)
        }

        /// Whether this call was the one that resumed it.
        @discardableResult
        func resume(_ outcome: Outcome) -> Bool {
            guard
                let pending = continuation.withLock({ value in
                    defer { value = nil }
                    return value
                })
            else { return false }
            pending.resume(returning: outcome)
            return true
        }
    }

    /// What went wrong, in words: a person reads this, not a code.
    private static func reason(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: "connection refused"
        case .networkConnectionLost: "the connection was dropped"
        case .cannotFindHost, .dnsLookupFailed: "the host name does not resolve"
        case .notConnectedToInternet: "no network"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            "the TLS connection failed"
        case .badServerResponse, .cannotParseResponse: "the connection closed without a valid HTTP answer"
        case .zeroByteResource: "the server closed the connection without answering"
        case .dataLengthExceedsMaximum: "the answer was too large"
        case .badURL, .unsupportedURL: "the URL cannot be requested"
        case .cancelled: "the request was cancelled"
        case .httpTooManyRedirects, .redirectToNonExistentLocation: "the server redirected the request"
        default: "the connection failed"
        }
    }

    static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) s" : "\(interval) s"
    }

    static func bytes(_ count: Int) -> String {
        count >= 1 << 20 && count % (1 << 20) == 0 ? "\(count >> 20) MiB" : "\(count) bytes"
    }
}
#endif
