import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPTransport`` over Foundation's URLSession (FoundationNetworking on Linux) for https, and over the library's
/// own HTTP/1.1 client for plain http to a loopback address. Does not follow redirects, keeps no cookies and no
/// cache, and reads an answer body only up to the request's ``HTTPRequest/maximumAnswerSize``.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate = SessionTaskDelegate()

    /// A transport with an ephemeral session of its own.
    public init() {
        // This session keeps nothing on disk; Foundation's folders made for it are removed again.
        let folders = Self.foundationFolders()
        let existing = Set(folders.map(\.path).filter { FileManager.default.fileExists(atPath: $0) })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        Self.removeFoldersMade(since: existing, among: folders)
    }

    /// The folders swift-corelibs-foundation makes for every session configuration, even an ephemeral one with
    /// no cache and no cookies: `~/.cache/org.swift.foundation.URLCache/{process}` (URLCache) and
    /// `$XDG_DATA_HOME/{bundle}` (cookie storage), with their parents. Deepest first.
    private static func foundationFolders() -> [URL] {
        #if canImport(FoundationNetworking)
        let manager = FileManager.default
        func base(_ directory: FileManager.SearchPathDirectory) -> URL? {
            try? manager.url(for: directory, in: .userDomainMask, appropriateFor: nil, create: false)
        }
        func usable(_ name: String) -> Bool { !name.isEmpty && name != "." && name != ".." && !name.contains("/") }
        var folders: [URL] = []
        if let caches = base(.cachesDirectory) {
            let cache = caches.appending(path: "org.swift.foundation.URLCache")
            let name = (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName)
                .replacingOccurrences(of: "\\", with: "_")
                .replacingOccurrences(of: ":", with: "_")
                .replacingOccurrences(of: "/", with: "_")
            if usable(name) { folders.append(cache.appending(path: name)) }
            folders += [cache, caches]
        }
        if let data = base(.applicationSupportDirectory) {
            let name = Bundle.main.bundleURL.lastPathComponent
            if usable(name) { folders.append(data.appending(path: name)) }
            folders += [data, data.deletingLastPathComponent()]
        }
        return folders
        #else
        return []
        #endif
    }

    /// Removes the folders of ``foundationFolders()`` that were not there before this session was made, when
    /// they are empty: `rmdir` removes nothing that holds a file, and nothing that existed before is touched.
    private static func removeFoldersMade(since existing: Set<String>, among folders: [URL]) {
        for folder in folders where !existing.contains(folder.path) { rmdir(folder.path) }
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        #if canImport(Glibc)
        // Plain http to a loopback address goes over a socket of the library's own (see LoopbackHTTPClient).
        if request.url.isPlainLoopback {
            return try await LoopbackHTTPClient.send(request)
        }
        #endif
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
