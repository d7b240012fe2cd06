import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request, as the library sends it.
public struct HTTPRequest: Sendable {
    /// GET or POST.
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any. It may hold secrets: transports must not log it.
    public var body: Data?
    /// Seconds to wait for the whole answer.
    public var timeout: TimeInterval

    /// A request; `timeout` defaults to 15 seconds.
    public init(
        method: String,
        url: URL,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: TimeInterval = 15
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP answer. Redirects are not followed: a 3xx comes back as it is.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields, names in lower case.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// An answer.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// No HTTP answer came back.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// Why not.
    public enum Kind: Sendable, Equatable {
        /// The connection was refused, dropped or could not be made.
        case noResponse
        /// No answer in the time allowed.
        case timedOut
    }

    /// Why no answer came back.
    public let kind: Kind
    /// The host the request went to.
    public let host: String
    /// What the system said, for people.
    public let reason: String

    /// A transport failure.
    public init(kind: Kind, host: String, reason: String) {
        self.kind = kind
        self.host = host
        self.reason = reason
    }

    public var description: String { "no answer from \(host): \(reason)" }
}

/// The small seam between the library and the network, so the library needs no server framework
/// and builds on Apple platforms too. ``URLSessionTransport`` is the default.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status; throws only when no answer came back.
    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse
}

/// ``HTTPTransport`` over Foundation's URLSession (FoundationNetworking on Linux). Does not follow
/// redirects, keeps no cookies and no cache.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate = NoRedirects()

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

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let host = request.url.host ?? request.url.absoluteString

        // FoundationNetworking does not enforce the request's timeout on every path, and cancelling a task
        // from a Swift cancellation handler can deadlock it; so a dispatch timer cancels the task instead,
        // and whichever of the answer and the timer comes first settles the call.
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let settle = SettleOnce(continuation)
            let task = session.dataTask(with: urlRequest) { data, response, error in
                settle.resume(.answered(data, response, error))
            }
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + request.timeout) {
                if settle.resume(.timedOut) { task.cancel() }
            }
        }
        switch outcome {
        case .timedOut:
            throw TransportError(kind: .timedOut, host: host, reason: "timed out after \(request.timeout) s")
        case .answered(_, _, let error as URLError) where error.code == .timedOut:
            throw TransportError(kind: .timedOut, host: host, reason: "timed out after \(request.timeout) s")
        case .answered(_, _, let error as URLError):
            throw TransportError(kind: .noResponse, host: host, reason: Self.reason(error))
        case .answered(_, _, let error?):
            throw TransportError(kind: .noResponse, host: host, reason: "\(type(of: error))")
        case .answered(let data, let response, nil):
            guard let http = response as? HTTPURLResponse else {
                throw TransportError(kind: .noResponse, host: host, reason: "the answer was not HTTP")
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            return HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())
        }
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

    private static func reason(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: "connection refused"
        case .networkConnectionLost: "the connection was dropped"
        case .cannotFindHost, .dnsLookupFailed: "the host name does not resolve"
        case .notConnectedToInternet: "no network"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate:
            "the TLS connection failed"
        default: "network error \(error.code.rawValue)"
        }
    }
}

/// Stops URLSession from following redirects: the library handles every 3xx itself.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

extension URL {
    /// Whether the host is a loopback address or name, where plain http is acceptable (RFC 8252 section 8.3).
    var isLoopback: Bool {
        guard let host = host?.lowercased() else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// https, or http to a loopback host.
    var isSecureOrLoopback: Bool {
        scheme?.lowercased() == "https" || (scheme?.lowercased() == "http" && isLoopback)
    }
}
