import Foundation
import Testing
import VaultTestSupport

/// A small https server in Python (the machine's python3, standard library only) that answers only requests
/// carrying the expected access token, for the helpers' real clients:
/// - `kube`: `Authorization: Bearer TOKEN`, then `/version` as a Kubernetes API server answers it;
/// - `git`: HTTP Basic with the token as the password (git 2.39 sends a helper's token so), then `git http-backend`
///   as CGI over the repositories in a directory;
/// - `registry`: HTTP Basic as `git`, then `/v2/` and one manifest as a container registry answers them.
/// Without the token it answers 401 (with `WWW-Authenticate: Basic` for git and the registry). The token reaches it
/// in its environment only, never in a file; the certificate is the test authority's. The registry writes each
/// request it answered with the token (method and path) to `bearer-server.port.served`.
struct BearerServer {
    let port: Int

    static let script = #"""
        import base64, http.server, json, os, ssl, subprocess, sys

        mode, port_file, certificate, key, root = sys.argv[1:6]
        expected = os.environ.pop("EXPECTED_TOKEN")
        MANIFEST = json.dumps({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": 2,
                       "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
            "layers": [],
        }).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass

            def authorized(self):
                header = self.headers.get("Authorization", "")
                if mode == "kube":
                    return header == "Bearer " + expected
                if not header.startswith("Basic "):
                    return False
                _, _, password = base64.b64decode(header[6:]).decode().partition(":")
                return password == expected

            def answer(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.serve()

            def do_HEAD(self):
                self.serve()

            def do_POST(self):
                self.serve()

            def serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                if not self.authorized():
                    challenge = [] if mode == "kube" else [("WWW-Authenticate", 'Basic realm="test"')]
                    return self.answer(401, b'{"kind":"Status","code":401}', challenge)
                path, _, query = self.path.partition("?")
                if mode == "kube":
                    return self.answer(200, b'{"major":"1","minor":"32","gitVersion":"v1.32.0-bearer-checked"}',
                                       [("Content-Type", "application/json")])
                if mode == "registry":
                    if path == "/v2/" or path == "/v2":
                        return self.answer(200, b"{}", [("Content-Type", "application/json"),
                                                         ("Docker-Distribution-API-Version", "registry/2.0")])
                    with open(port_file + ".served", "a") as served:
                        served.write(self.command + " " + path + "\n")
                    if "/blobs/" in path:
                        return self.answer(200, b"{}", [("Content-Type", "application/octet-stream")])
                    return self.answer(200, MANIFEST, [
                        ("Content-Type", "application/vnd.oci.image.manifest.v1+json"),
                        ("Docker-Content-Digest", "sha256:" + __import__("hashlib").sha256(MANIFEST).hexdigest()),
                        ("Docker-Distribution-API-Version", "registry/2.0")])
                environment = {
                    "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
                    "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_USER": "token",
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(data)),
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "HOME": root,
                }
                if self.headers.get("Content-Encoding"):
                    environment["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                if self.headers.get("Git-Protocol"):
                    environment["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
                output = subprocess.run(["git", "http-backend"], input=data, env=environment,
                                        capture_output=True).stdout
                head, _, body = output.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.split(b"\r\n"):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.answer(status, body, headers)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        with open(port_file + ".tmp", "w") as out:
            out.write(str(server.server_address[1]))
        os.rename(port_file + ".tmp", port_file)
        server.serve_forever()
        """#

    /// Runs the server in `mode` for `token` with its files in `directory` (the git repositories under `root`), runs
    /// `body`, and always stops it.
    static func with(
        mode: String,
        token: String,
        in directory: URL,
        root: URL? = nil,
        _ body: (BearerServer) async throws -> Void
    ) async throws {
        let scriptURL = directory.appending(path: "bearer-server.py")
        try Data(script.utf8).write(to: scriptURL)
        let (certificate, key) = try TestCertificateAuthority.shared.writeServerFiles(in: directory)
        let portFile = directory.appending(path: "bearer-server.port")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GIT_") }
        environment["EXPECTED_TOKEN"] = token
        try await TestProcess.with(
            [
                "/usr/bin/python3", scriptURL.path, mode, portFile.path, certificate.path, key.path,
                (root ?? directory).path,
            ],
            environment: environment,
            output: .none,
            error: .file(directory.appending(path: "bearer-server.err"))
        ) { _ in
            var port: Int?
            for _ in 0..<300 {
                if let text = try? String(contentsOf: portFile, encoding: .utf8), let value = Int(text) {
                    port = value
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let started = try #require(
                port,
                "the test server did not start: \((try? String(contentsOf: directory.appending(path: "bearer-server.err"), encoding: .utf8)) ?? "")"
            )
            try await body(BearerServer(port: started))
        }
    }
}
