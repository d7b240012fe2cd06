import Foundation
import VaultCrypto

/// What ``LoopbackRedirectReceiver`` makes of the bytes one connection sent: the head of an HTTP request, then
/// its request line against the redirect this login waits for. Bytes in, a decision out, no socket: any process on
/// the machine can send these bytes, so they are tested as hostile input on their own.
enum LoopbackRedirectRequest {
    /// Where a connection's request stands after the bytes received so far.
    enum Head: Equatable {
        /// More is to come.
        case incomplete
        /// Over the size limit: dropped unanswered.
        case tooLarge
        /// The head is complete; this is its first line.
        case complete(requestLine: String)
    }

    /// What the listener answers to a complete request.
    enum Verdict: Equatable {
        /// Not a `GET` of an origin-form target: 400.
        case notARequest
        /// Another path (a browser's favicon request): 404.
        case notFound
        /// The redirect path without this login's `state`: 400, and the wait goes on.
        case otherLogin
        /// The redirect that ends the wait; `isError` when the issuer answered with an `error`.
        case redirect(URL, isError: Bool)
    }

    /// The state of a request of which `received` has arrived, refused past `maximumSize` bytes.
    static func head(of received: [UInt8], maximumSize: Int) -> Head {
        guard received.count <= maximumSize else { return .tooLarge }
        guard received.firstRange(of: [13, 10, 13, 10]) != nil || received.firstRange(of: [10, 10]) != nil else {
            return .incomplete
        }
        let lineEnd = received.firstIndex { $0 == 13 || $0 == 10 } ?? received.endIndex
        return .complete(requestLine: String(decoding: received[..<lineEnd], as: UTF8.self))
    }

    /// The answer to the request line `line` on `port`, for a login waiting at `path` with `state`.
    static func verdict(requestLine line: String, path: String, state: String, port: UInt16) -> Verdict {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/"),
            let url = URL(string: "http://127.0.0.1:\(port)\(parts[1])")
        else { return .notARequest }
        guard parts[1].prefix(while: { $0 != "?" }) == path else { return .notFound }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        // Constant time: the state is what keeps another local process from answering for the issuer.
        guard let received = items.first(where: { $0.name == "state" })?.value,
            ConstantTime.equal(Data(received.utf8), Data(state.utf8))
        else { return .otherLogin }
        return .redirect(url, isError: items.contains { $0.name == "error" })
    }
}
