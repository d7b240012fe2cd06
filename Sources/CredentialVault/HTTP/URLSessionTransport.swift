import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPTransport`` over Foundation's URLSession (FoundationNetworking on Linux). Does not follow
/// redirects, keeps no cookies and no cache, and reads an answer body only up to the request's
/// ``HTTPRequest/maximumAnswerSize``.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate = SessionDelegate()

    /// A transport with an ephemeral session of its own.
    public init() {
        // This session keeps nothing on disk; Foundation's folders made for it are removed again.
        let folders = Self.foundationFolders()
        let existing = Set(folders.map(\.path).filter { FileManager.default.fileExists(atPath: $0) })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        #if canImport(FoundationNetworking)
        let delegateQueue: OperationQueue? = InlineDelegateQueue()
        #else
        let delegateQueue: OperationQueue? = nil
        #endif
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
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
        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let host = request.url.displayHost

        // FoundationNetworking does not enforce the request's timeout on every path, and cancelling a task
        // from a Swift cancellation handler can deadlock it; so a dispatch timer cancels the task instead,
        // and whichever of the answer, the size limit and the timer comes first settles the call.
        // No completion handler: one would buffer the whole body, so the delegate counts it as it arrives.
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let exchange = Exchange(limit: request.maximumAnswerSize, continuation)
            let task = session.dataTask(with: urlRequest)
            delegate.begin(exchange, for: task)
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + request.timeout) {
                if exchange.settle(.timedOut) { task.cancel() }
            }
        }
        switch outcome {
        case .tooLarge:
            throw TransportError(
                kind: .answerTooLarge,
                host: host,
                reason: "the answer is larger than \(Self.bytes(request.maximumAnswerSize)), the most accepted"
            )
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
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            return HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())
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

    private static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) s" : "\(interval) s"
    }

    private static func bytes(_ count: Int) -> String {
        count >= 1 << 20 && count % (1 << 20) == 0 ? "\(count >> 20) MiB" : "\(count) bytes"
    }
}

private enum Outcome: @unchecked Sendable {
    // @unchecked Sendable: the values are handed over once, from URLSession's queue to the waiting task.
    case answered(Data?, URLResponse?, (any Error)?)
    case tooLarge
    case timedOut
}

/// One request's answer as it arrives: the body so far, never more than `limit` bytes, and the call to
/// settle exactly once, by whichever of the answer, the size limit and the timer comes first.
private final class Exchange: Sendable {
    private struct State {
        var body = Data()
        var continuation: CheckedContinuation<Outcome, Never>?
    }

    let limit: Int
    private let state: Mutex<State>

    init(limit: Int, _ continuation: CheckedContinuation<Outcome, Never>) {
        self.limit = max(0, limit)
        state = Mutex(State(continuation: continuation))
    }

    /// Keeps `data`, or settles the call as too large and stops `task` when the body would pass the limit.
    func receive(_ data: Data, of task: URLSessionTask) {
        let kept = state.withLock { state in
            guard state.continuation != nil, data.count <= limit - state.body.count else { return false }
            state.body.append(data)
            return true
        }
        if !kept { refuse(task) }
    }

    /// Settles the call as too large and stops reading: the connection is closed, whatever the server still sends.
    func refuse(_ task: URLSessionTask) {
        guard settle(.tooLarge) else { return }
        // Not on URLSession's delegate queue, where this runs: cancelling hops to the task's own queue.
        DispatchQueue.global().async { task.cancel() }
    }

    /// Settles the call with what URLSession reports at the end of the task.
    func complete(response: URLResponse?, error: (any Error)?) {
        let body = state.withLock { $0.body }
        settle(.answered(body, response, error))
    }

    /// Whether this call was the one that settled it.
    @discardableResult
    func settle(_ outcome: Outcome) -> Bool {
        let pending = state.withLock { state in
            defer {
                state.continuation = nil
                state.body = Data()
            }
            return state.continuation
        }
        guard let pending else { return false }
        pending.resume(returning: outcome)
        return true
    }
}

#if canImport(FoundationNetworking)
/// Runs each delegate callback at once, on URLSession's own queue that reports it, instead of queueing it.
/// FoundationNetworking reads a body without waiting for its delegate: with queued callbacks, a busy process
/// counted bytes long after libcurl had read and buffered them (a whole 512 MiB answer, in a test). Inline,
/// the count keeps pace with the reading, and a cancel stops it within one read of the socket.
private final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked Sendable as OperationQueue is: this subclass adds no state.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
}
#endif

/// The session's delegate: follows no redirect (the library handles every 3xx itself), and hands each task's
/// body to its ``Exchange`` as it arrives, so no body is buffered past its limit.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Mutex<[Int: Exchange]>([:])

    /// Routes `task`'s answer to `exchange`; call before `resume()`.
    func begin(_ exchange: Exchange, for task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    private func exchange(for task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // A declared length over the limit is refused before any of the body is read. FoundationNetworking
        // ignores a `.cancel` disposition, so the exchange cancels the task itself.
        if let exchange = exchange(for: dataTask), response.expectedContentLength > Int64(exchange.limit) {
            exchange.refuse(dataTask)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask)?.receive(data, of: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.complete(response: task.response, error: error)
    }

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
