"""Runs django-oauth-toolkit on 127.0.0.1 for the interop tests, in the foreground.

    .build-interop/venv/bin/python Tests/Interop/dot/run.py --port 0 [--public-url https://127.0.0.1:PORT]

Makes a temporary directory (sqlite database, a fresh RSA key), migrates, creates the
user and clients (interop_dot/bootstrap.py), then serves and prints exactly one line on
stdout once the server answers:

    dot listening on http://127.0.0.1:PORT issuer http://127.0.0.1:PORT/o

With --public-url it runs behind a TLS-terminating reverse proxy at that origin (nginx with
Tests/Interop/dot/nginx.conf, as the interop tests run it): the issuer is PUBLIC_URL/o, and Django
trusts the proxy's X-Forwarded-Proto as a deployment behind one does (SECURE_PROXY_SSL_HEADER);
the line then reads `dot listening on http://127.0.0.1:PORT issuer https://127.0.0.1:FRONT/o`.

It stops cleanly, removing the temporary directory, on SIGTERM or SIGINT, and with
--exit-on-stdin-eof also when its standard input closes (the parent died). Request logs
and errors go to stderr.
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument(
        "--public-url",
        help="the https origin of the TLS-terminating proxy in front (https://127.0.0.1:PORT); "
        "Django then trusts its X-Forwarded-Proto header",
    )
    parser.add_argument(
        "--access-token-lifetime",
        type=int,
        default=int(os.environ.get("DOT_ACCESS_TOKEN_EXPIRE_SECONDS", "300")),
        help="access token lifetime in seconds (default 300, or $DOT_ACCESS_TOKEN_EXPIRE_SECONDS)",
    )
    parser.add_argument(
        "--redirect-uri",
        action="append",
        default=[],
        help="an extra redirect URI for the vault-code client (repeatable); "
        "http://127.0.0.1/callback on any port is always allowed",
    )
    parser.add_argument(
        "--jwt-access-tokens",
        action="store_true",
        help="issue signed JWT access tokens instead of DOT's default opaque ones",
    )
    parser.add_argument(
        "--exit-on-stdin-eof", action="store_true", help="stop when standard input reaches end of file"
    )
    return parser.parse_args()


def write_rsa_key(path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(pem)


def wait_until_answering(url, timeout):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer within {timeout} s")
        time.sleep(0.05)


def main():
    arguments = parse_arguments()
    state_dir = Path(tempfile.mkdtemp(prefix="dot-interop-"))
    stop = threading.Event()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda *_: stop.set())
    # A parent may spawn us with these blocked (the mask is inherited); SIGTERM must stop us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    server = None
    serving = False
    try:
        write_rsa_key(state_dir / "oidc-rsa.pem")

        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

        # Bound before Django reads its settings, so the issuer names the real port, and
        # bound once, so no other process can take the port between choosing and listening.
        server = ThreadedWSGIServer(("127.0.0.1", arguments.port), WSGIRequestHandler, ipv6=False)
        server.daemon_threads = True
        port = server.server_address[1]
        base_url = f"http://127.0.0.1:{port}"
        issuer = f"{(arguments.public_url or base_url).rstrip('/')}/o"

        sys.path.insert(0, str(HERE))
        os.environ["DJANGO_SETTINGS_MODULE"] = "interop_dot.settings"
        os.environ["DOT_STATE_DIR"] = str(state_dir)
        os.environ["DOT_ISSUER"] = issuer
        os.environ["DOT_BEHIND_TLS_PROXY"] = "1" if arguments.public_url else "0"
        os.environ["DOT_ACCESS_TOKEN_EXPIRE_SECONDS"] = str(arguments.access_token_lifetime)
        os.environ["DOT_JWT_ACCESS_TOKENS"] = "1" if arguments.jwt_access_tokens else "0"

        import django
        from django.core.management import call_command
        from django.core.wsgi import get_wsgi_application

        django.setup()
        call_command("migrate", verbosity=0, interactive=False)
        from interop_dot.bootstrap import bootstrap

        bootstrap(arguments.redirect_uri)

        server.set_app(get_wsgi_application())
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        serving = True
        # DOT itself, not the proxy in front (started once this line is out).
        wait_until_answering(f"{base_url}/o/.well-known/openid-configuration", timeout=30)
        print(f"dot listening on {base_url} issuer {issuer}", flush=True)

        if arguments.exit_on_stdin_eof:

            def watch_stdin():
                # os.read, not sys.stdin: a buffered reader still blocked at exit aborts Python.
                while os.read(0, 4096):
                    pass
                stop.set()

            threading.Thread(target=watch_stdin, daemon=True).start()
        stop.wait()  # a signal interrupts the wait and runs its handler
        return 0
    except Exception as error:  # noqa: BLE001 - anything here means no server; say why
        print(f"dot failed to start: {error!r}", file=sys.stderr, flush=True)
        return 1
    finally:
        if serving:
            server.shutdown()
        if server is not None:
            server.server_close()
        shutil.rmtree(state_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
