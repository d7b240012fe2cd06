#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// ``HTTPTransport`` over AsyncHTTPClient: the default on Linux, for every scheme.
///
/// Every transport of the process with the same ``TrustRoots`` and proxy shares one `HTTPClient`, so connections
/// are reused across every `Vault`, `Auth`, key service, SMART and FHIR caller; the clients live as long as the
/// process. Redirects are handed back as the answer; the answer body is read only up to the request's
/// ``HTTPRequest/maximumAnswerSize`` (reading stops there); one deadline, the request's
/// ``HTTPRequest/timeout``, covers the whole exchange from connecting to the last byte. Plain http goes only to a
/// loopback IP literal (the library's one rule, `URL.isSecureOrLoopback`). Proxies come from the environment
/// (``ProxyEnvironment``); a loopback host is never proxied.
///
/// A failed connection is not retried by the client (a certificate failure would otherwise be retried until the
/// connect timeout): it ends the request at once with ``TransportError/Kind/notConnected`` or
/// ``TransportError/Kind/certificateNotTrusted``.
public struct AsyncHTTPClientTransport: HTTPTransport {
    private let trustRoots: TrustRoots?
    private let proxies: ProxyEnvironment

    /// A transport trusting the system's authorities and `trustRoots`, with the proxies of `proxies`.
    public init(trustRoots: TrustRoots? = nil, proxies: ProxyEnvironment = ProxyEnvironment()) {
        self.trustRoots = trustRoots
        self.proxies = proxies
    }

    /// Sends `request` on the shared client for its trust roots and proxy, under one deadline (the request's
    /// ``HTTPRequest/timeout``); plain http to anything but a loopback address is refused before connecting.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let host = request.url.displayHost
        guard request.url.isSecureOrLoopback else {
            throw TransportError(
                kind: .notConnected,
                host: host,
                reason: "plain http is sent only to a loopback address (127.0.0.1 or [::1]); use https"
            )
        }
        let client: HTTPClient
        do {
            client = try Self.client(trustRoots: trustRoots, proxy: proxies.proxy(for: request.url))
        } catch {
            throw TransportError(kind: .notConnected, host: host, reason: "the TLS settings are not usable (\(error))")
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let prepared = outgoing

        let seconds = max(0, request.timeout)
        let deadline = NIODeadline.now() + .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
        let clock = ContinuousClock()
        let until = clock.now + .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
        let result: Result<HTTPResponse, TransportError> = await withTaskGroup(
            of: Result<HTTPResponse, TransportError>?.self
        ) { group in
            group.addTask {
                do {
                    return .success(try await Self.exchange(prepared, on: client, deadline: deadline, request: request))
                } catch let error as TransportError {
                    return .failure(error)
                } catch {
                    return .failure(Self.failure(error, host: host, timeout: seconds))
                }
            }
            // AsyncHTTPClient's own deadline ends with the answer's head; this one covers the body too.
            group.addTask {
                try? await Task.sleep(until: until, clock: clock)
                return Task.isCancelled ? nil : .failure(Self.timedOut(host: host, timeout: seconds))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(Self.timedOut(host: host, timeout: seconds))
        }
        return try result.get()
    }

    /// Sends the request and reads the answer up to the limit.
    private static func exchange(
        _ prepared: HTTPClientRequest,
        on client: HTTPClient,
        deadline: NIODeadline,
        request: HTTPRequest
    ) async throws -> HTTPResponse {
        let host = request.url.displayHost
        let limit = request.maximumAnswerSize
        let response = try await client.execute(prepared, deadline: deadline)
        func tooLarge() -> TransportError {
            TransportError(
                kind: .answerTooLarge,
                host: host,
                reason: "the answer is larger than \(bytes(limit)), the most accepted"
            )
        }
        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > limit {
            throw tooLarge()
        }
        var body = Data()
        do {
            // Leaving the loop early ends the body stream, which closes the connection: nothing more is read.
            for try await chunk in response.body {
                guard chunk.readableBytes <= limit - body.count else { throw tooLarge() }
                body.append(contentsOf: chunk.readableBytesView)
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw MidAnswer(error: error)
        }
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            let name = name.lowercased()
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return HTTPResponse(status: Int(response.status.code), headers: headers, body: body)
    }

    // MARK: Clients

    private struct ClientKey: Hashable {
        let trustRoots: TrustRoots?
        let proxy: ProxyEnvironment.Proxy?
    }

    /// One client per trust roots and proxy, for the life of the process. A pthread mutex (NIOLockedValueBox), not
    /// Synchronization.Mutex: `make proof-races` runs this under ThreadSanitizer, which on Linux sees the order a
    /// pthread mutex makes and not Mutex's (CI's run at 55c0f44 stopped on a race in the suite where two vaults share
    /// these clients).
    private static let clients = NIOLockedValueBox<[ClientKey: HTTPClient]>([:])

    /// Shuts the process's shared clients down, closing their connections; for a process that wants to end with
    /// nothing open (the clients otherwise live until the process exits). A later request makes a new client.
    public static func shutDownSharedClients() async {
        let all = clients.withLockedValue { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { try? await client.shutdown() }
    }

    private static func client(trustRoots: TrustRoots?, proxy: ProxyEnvironment.Proxy?) throws -> HTTPClient {
        let key = ClientKey(trustRoots: trustRoots, proxy: proxy)
        if let client = clients.withLockedValue({ $0[key] }) { return client }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: try tlsConfiguration(trustRoots: trustRoots),
            redirectConfiguration: .disallow,
            // The request's own deadline bounds connecting; this only bounds a connection no request waits for.
            timeout: .init(connect: .seconds(60)),
            proxy: proxy.map { proxy in
                .server(
                    host: proxy.host,
                    port: proxy.port,
                    authorization: proxy.username.map { .basic(username: $0, password: proxy.password ?? "") }
                )
            },
            decompression: .disabled
        )
        // A failed connection ends the request with its own error at once, instead of being retried (with the
        // error hidden) until the connect timeout: a certificate failure is not going to heal.
        configuration.connectionPool.retryConnectionEstablishment = false
        return clients.withLockedValue { clients in
            if let existing = clients[key] { return existing }
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// The client's TLS: the system's authorities and `trustRoots` besides, or `trustRoots` alone when pinned.
    static func tlsConfiguration(trustRoots: TrustRoots?) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        guard let trustRoots else { return tls }
        let certificates = try trustRoots.certificatesPEM.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
        if trustRoots.onlyThese {
            tls.trustRoots = .certificates(certificates)
        } else {
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        return tls
    }

    // MARK: Errors

    /// A failure after the answer's head: the server answered, then the connection failed.
    private struct MidAnswer: Error {
        let error: any Error
    }

    private static func timedOut(host: String, timeout: TimeInterval) -> TransportError {
        TransportError(kind: .timedOut, host: host, reason: "no answer within \(seconds(timeout))")
    }

    /// AsyncHTTPClient's and SwiftNIO's errors in words, sorted into never sent and maybe sent.
    private static func failure(_ error: any Error, host: String, timeout: TimeInterval) -> TransportError {
        func notConnected(_ why: String) -> TransportError {
            TransportError(kind: .notConnected, host: host, reason: "could not connect to \(host) (\(why))")
        }
        func noResponse(_ why: String) -> TransportError {
            TransportError(kind: .noResponse, host: host, reason: why)
        }
        func untrusted(_ why: String) -> TransportError {
            TransportError(
                kind: .certificateNotTrusted,
                host: host,
                reason: "the certificate of \(host) is not trusted (\(why))"
            )
        }
        if let midAnswer = error as? MidAnswer {
            // The answer's head arrived: the request was sent, whatever the error says of itself.
            let inner = failure(midAnswer.error, host: host, timeout: timeout)
            guard inner.kind == .timedOut else { return noResponse("the connection was dropped mid-answer") }
            return inner
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return timedOut(host: host, timeout: timeout)
            case .cancelled:
                return noResponse("the request was cancelled")
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return notConnected("no connection within the time allowed")
            case .proxyAuthenticationRequired:
                return notConnected("the proxy asks for credentials; put them in the proxy URL")
            case .invalidProxyResponse, .httpProxyHandshakeTimeout, .socksHandshakeTimeout:
                return notConnected("the proxy did not open a tunnel")
            case .invalidURL, .emptyHost, .emptyScheme:
                return notConnected("the URL cannot be requested")
            case .remoteConnectionClosed:
                return noResponse("the connection closed without an answer")
            case .alreadyShutdown:
                return notConnected("the process's HTTP client was shut down")
            default:
                return noResponse("the answer was not valid HTTP (\(error))")
            }
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return untrusted("it is not issued for \(host)")
        }
        if let error = error as? NIOSSLError {
            // Only the handshake and the checks of the server's certificate come before the request is written;
            // any other TLS failure (a shutdown, a read in a bad state) may come after it.
            switch error {
            case .handshakeFailed:
                if "\(error)".contains("CERTIFICATE_VERIFY_FAILED") {
                    return untrusted("no trusted certificate authority vouches for it, or it has expired; give its CA")
                }
                return notConnected("the TLS handshake failed")
            case .unableToValidateCertificate, .noCertificateToValidate, .cannotMatchULabel:
                return untrusted("its certificate cannot be checked")
            case .uncleanShutdown:
                return noResponse("the TLS connection closed without a complete answer")
            default:
                return noResponse("the TLS connection failed")
            }
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return notConnected("the host name does not resolve")
            }
            return notConnected(error.connectionErrors.first.map { reason($0.error) } ?? "connection refused")
        }
        if error is CancellationError {
            return noResponse("the request was cancelled")
        }
        if let error = error as? IOError, neverSentErrno.contains(error.errnoCode) {
            return notConnected(reason(error))
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return notConnected("no connection within the time allowed")
        }
        if error is HTTPParserError {
            return noResponse("the answer was not valid HTTP")
        }
        return noResponse("the connection failed")
    }

    /// errno values that only a connect gives: the request never left. (A route lost later, EHOSTUNREACH or
    /// ENETUNREACH, can also end a connection the request went out on: those count as maybe sent.)
    private static let neverSentErrno: Set<Int32> = [ECONNREFUSED, EADDRNOTAVAIL]

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? IOError else { return "connection refused" }
        switch error.errnoCode {
        case ECONNREFUSED: return "connection refused"
        case ENETUNREACH, EHOSTUNREACH: return "no route to the host"
        case EADDRNOTAVAIL: return "the address is not available"
        default: return "connection failed, errno \(error.errnoCode)"
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
