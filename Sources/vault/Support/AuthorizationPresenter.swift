import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Shows the authorization URL of the OpenID Connect code flow, or follows it when nobody is at a browser.
enum AuthorizationPresenter {
    /// For a person: prints the URL on standard error and opens a browser when there is a display.
    static func browser(_ url: URL) async {
        Terminal.note("Open this URL in a browser to log in:\n\n  \(url.absoluteString)\n")
        let environment = ProcessInfo.processInfo.environment
        let hasDisplay = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
        if hasDisplay, openWithXdgOpen(url) {
            Terminal.note("(opened with xdg-open) Waiting for the browser to come back...")
        } else {
            Terminal.note("Waiting for the browser to come back...")
        }
    }

    /// For an issuer that approves without a page (KeyServiceMock, the embedded default): fetches the
    /// authorization URL without following redirects, then requests the 302's `Location`, which delivers the
    /// code to the loopback listener. A failure is delivered to the listener as an OAuth error, so the flow
    /// ends at once with the reason instead of waiting for its timeout.
    static func unattended(_ url: URL) async {
        let session = URLSession(configuration: .ephemeral, delegate: RedirectRefuser(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let location: URL
        do {
            var request = URLRequest(url: url, timeoutInterval: 15)
            request.httpMethod = "GET"
            let (_, response) = try await session.data(for: request)
            let http = response as? HTTPURLResponse
            guard let http, (300..<400).contains(http.statusCode),
                let header = http.value(forHTTPHeaderField: "Location"),
                let target = URL(string: header, relativeTo: url)?.absoluteURL
            else {
                let status = http.map { "HTTP \($0.statusCode)" } ?? "no HTTP answer"
                await deliverError(
                    "the authorization endpoint answered \(status) instead of a redirect; it needs a browser "
                        + "(run without --unattended)",
                    authorizationURL: url,
                    session: session
                )
                return
            }
            location = target
        } catch {
            await deliverError(
                "could not reach \(url.host ?? "the issuer"): \(error.localizedDescription)",
                authorizationURL: url,
                session: session
            )
            return
        }
        guard let expected = queryItem("redirect_uri", in: url), location.absoluteString.hasPrefix(expected) else {
            await deliverError(
                "the issuer redirected somewhere other than this login's redirect URI",
                authorizationURL: url,
                session: session
            )
            return
        }
        _ = try? await session.data(from: location)
    }

    private static func deliverError(_ reason: String, authorizationURL: URL, session: URLSession) async {
        guard let redirect = queryItem("redirect_uri", in: authorizationURL),
            var components = URLComponents(string: redirect)
        else { return }
        components.queryItems = [
            URLQueryItem(name: "error", value: "unattended_login_failed"),
            URLQueryItem(name: "error_description", value: reason),
            URLQueryItem(name: "state", value: queryItem("state", in: authorizationURL)),
        ]
        guard let url = components.url else { return }
        _ = try? await session.data(from: url)
    }

    private static func queryItem(_ name: String, in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    private static func openWithXdgOpen(_ url: URL) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url.absoluteString]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        return true
    }
}

/// Keeps URLSession from following the authorization endpoint's redirect: the presenter reads it itself.
private final class RedirectRefuser: NSObject, URLSessionTaskDelegate, Sendable {
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
