import CredentialVault
import Foundation
import VaultPOSIX

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
    /// ends at once with the reason instead of waiting for its timeout. `trustRoots` are the configuration's
    /// (`--ca-file`), for an issuer whose certificate a private authority signed.
    static func unattended(_ url: URL, trustRoots: TrustRoots? = nil) async {
        // The library's transport never follows redirects: the 302 comes back to be read here.
        let transport = DefaultHTTPTransport.make(trustRoots: trustRoots)
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "GET", url: url))
        } catch {
            await deliverError(
                "could not reach \(error.host): \(error.reason)",
                authorizationURL: url,
                transport: transport
            )
            return
        }
        guard (300..<400).contains(response.status), let header = response.headers["location"],
            let location = URL(string: header, relativeTo: url)?.absoluteURL
        else {
            await deliverError(
                "the authorization endpoint answered HTTP \(response.status) instead of a redirect; it needs a browser "
                    + "(run without --unattended)",
                authorizationURL: url,
                transport: transport
            )
            return
        }
        guard let expected = queryItem("redirect_uri", in: url), location.absoluteString.hasPrefix(expected) else {
            await deliverError(
                "the issuer redirected somewhere other than this login's redirect URI",
                authorizationURL: url,
                transport: transport
            )
            return
        }
        _ = try? await transport.send(HTTPRequest(method: "GET", url: onLoopbackLiteral(location)))
    }

    /// The redirect URI with `localhost` as 127.0.0.1, where the library's listener is: the transport sends plain
    /// http only to loopback IP literals (a browser would resolve the name itself).
    private static func onLoopbackLiteral(_ url: URL) -> URL {
        guard url.host?.lowercased() == "localhost",
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.host = "127.0.0.1"
        return components.url ?? url
    }

    /// Ends the waiting flow at once with `reason`, as an OAuth error answer on the loopback listener.
    private static func deliverError(_ reason: String, authorizationURL: URL, transport: any HTTPTransport) async {
        guard let redirect = queryItem("redirect_uri", in: authorizationURL),
            var components = URLComponents(string: redirect)
        else { return }
        components.queryItems = [
            URLQueryItem(name: "error", value: "unattended_login_failed"),
            URLQueryItem(name: "error_description", value: reason),
            URLQueryItem(name: "state", value: queryItem("state", in: authorizationURL)),
        ]
        guard let url = components.url else { return }
        _ = try? await transport.send(HTTPRequest(method: "GET", url: onLoopbackLiteral(url)))
    }

    private static func queryItem(_ name: String, in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// Starts xdg-open with descriptors 0, 1 and 2 on /dev/null and nothing else (posix_spawn, ``ChildProcess``);
    /// not waited for: the browser outlives it.
    private static func openWithXdgOpen(_ url: URL) -> Bool {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { return false }
        defer { close(null) }
        return
            (try? ChildProcess.spawn(
                ["xdg-open", url.absoluteString],
                environment: ProcessInfo.processInfo.environment,
                descriptors: [(0, null), (1, null), (2, null)],
                onlyStandardDescriptors: true
            )) != nil
    }
}
