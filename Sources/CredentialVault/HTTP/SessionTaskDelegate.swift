#if canImport(Darwin)
import Foundation
import Synchronization

/// URLSession's delegate for ``URLSessionTransport``: it follows no redirect (the library handles every 3xx itself)
/// and answers no authentication challenge.
///
/// A 401 with `WWW-Authenticate` (RFC 6749 section 5.2 asks a token endpoint to send one after a failed HTTP Basic
/// client authentication) is a challenge to URLSession. On Linux, FoundationNetworking then never completes the task
/// unless the challenge is cancelled, and a cancelled task reports a cancellation, not the 401. So the challenge is
/// cancelled and its response kept here, for the transport to hand over as the answer (without its body, which
/// URLSession does not read).
final class SessionTaskDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// The challenged responses, by task identifier, until the transport takes them.
    private let challenged = Mutex<[Int: HTTPURLResponse]>([:])

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Darwin)
        // A server-trust challenge (TLS) keeps the system's own evaluation.
        guard challenge.protectionSpace.authenticationMethod != NSURLAuthenticationMethodServerTrust else {
            return completionHandler(.performDefaultHandling, nil)
        }
        #endif
        let response =
            (challenge.failureResponse as? HTTPURLResponse) ?? (task.response as? HTTPURLResponse)
            ?? HTTPURLResponse(
                url: task.originalRequest?.url ?? URL(fileURLWithPath: "/"),
                statusCode: 401,
                httpVersion: nil,
                headerFields: nil
            )
        if let response { challenged.withLock { $0[task.taskIdentifier] = response } }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// The challenged response of the task `identifier`, if it was challenged; forgotten once taken.
    func takeChallengedResponse(of identifier: Int) -> HTTPURLResponse? {
        challenged.withLock { $0.removeValue(forKey: identifier) }
    }
}
#endif
