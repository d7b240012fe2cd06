import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        Self.removeUnusedCacheFolder()
    }

    /// swift-corelibs-foundation creates an on-disk URLCache folder (`~/.cache/org.swift.foundation.URLCache/
    /// {process}`) whenever a session configuration is made, even an ephemeral one with no cache. This session
    /// never caches, so the folder is removed again when it is empty: `rmdir` never removes anything in use.
    private static func removeUnusedCacheFolder() {
        #if canImport(FoundationNetworking)
        guard
            let caches = try? FileManager.default.url(
                for: .cachesDirectory,
                in: .userDomainMask,
                appropriateFor: nil,
                create: false
            )
        else { return }
        let name = (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName)
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "\\", with: "_")
            .replacingOccurrences(of: ":", with: "_")
        let folder = caches.appending(path: "org.swift.foundation.URLCache")
        rmdir(folder.appending(path: name).path)
        rmdir(folder.path)
        #endif
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
            throw TransportError(kind: .noResponse, host: host, reason: Self.reason(error))
        case .answered(_, _, _?):
            throw TransportError(kind: .noResponse, host: host, reason: "the connection failed")
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
        case .badServerResponse, .cannotParseResponse: "the server's answer was not valid HTTP"
        case .zeroByteResource: "the server closed the connection without answering"
        case .dataLengthExceedsMaximum: "the answer was too large"
        case .badURL, .unsupportedURL: "the URL cannot be requested"
        case .cancelled: "the request was cancelled"
        case .httpTooManyRedirects, .redirectToNonExistentLocation: "the server redirected the request"
        default: "the connection failed"
        }
    }

    private static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) s" : "\(interval) s"
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
