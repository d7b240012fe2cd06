"""Signs in at django-oauth-toolkit's authorization endpoint the way a browser would.

    .build-interop/venv/bin/python Tests/Interop/dot/drive_login.py [--ca-file PEM] AUTHORIZATION_URL

GETs the authorization URL, follows the redirect to the login form, posts the user's
credentials with the form's CSRF token, and follows redirects on the server's own origin.
The first redirect that leaves it (the client's loopback callback, carrying code and state,
or error) is printed on stdout and never requested. Exits 1 with a message on stderr when
no such redirect comes: a rejected login, an error page, too many redirects. Over https it trusts
the certificate authorities of --ca-file (the test's own), else the system's.
"""

import argparse
import re
import sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import requests

MAX_STEPS = 10


class LoginFormParser(HTMLParser):
    """Collects the action and the fields of the first form that has a password input."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attributes.get("action") or "", "fields": {}, "password": False})
        elif tag == "input" and self.forms:
            name = attributes.get("name")
            if attributes.get("type") == "password":
                self.forms[-1]["password"] = True
            if name:
                self.forms[-1]["fields"][name] = attributes.get("value") or ""

    def login_form(self):
        return next((form for form in self.forms if form["password"]), None)


def fail(message):
    print(f"drive_login: {message}", file=sys.stderr)
    sys.exit(1)


def page_text(html):
    """The visible text of an HTML page, for an error message."""
    body = re.sub(r"(?is)<head.*?</head>", " ", html)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())[:500]


def origin(url):
    parts = urlsplit(url)
    return (parts.scheme, parts.hostname, parts.port)


def drive(authorization_url, username, password, timeout, ca_file):
    server_origin = origin(authorization_url)
    session = requests.Session()
    # Given with each request: a session's own verify loses to REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE.
    verify = ca_file or True
    url, method, data, posted_login = authorization_url, "GET", None, False
    for _ in range(MAX_STEPS):
        response = session.request(
            method, url, data=data, allow_redirects=False, timeout=timeout, verify=verify
        )
        if response.is_redirect:
            target = urljoin(url, response.headers["Location"])
            if origin(target) != server_origin:
                return target
            url, method, data = target, "GET", None
            continue
        if response.status_code != 200:
            fail(f"{method} {url} answered HTTP {response.status_code}: {page_text(response.text)}")
        parser = LoginFormParser()
        parser.feed(response.text)
        form = parser.login_form()
        if form is None:
            fail(f"{url} answered a page with no login form and no redirect: {page_text(response.text)}")
        if posted_login:
            fail(f"the login form rejected {username!r}'s credentials")
        fields = dict(form["fields"])
        fields["username"] = username
        fields["password"] = password
        if "csrfmiddlewaretoken" not in fields and "csrftoken" in session.cookies:
            fields["csrfmiddlewaretoken"] = session.cookies["csrftoken"]
        url, method, data, posted_login = urljoin(url, form["action"] or url), "POST", fields, True
        session.headers["Referer"] = response.url
    fail(f"no redirect off {authorization_url} after {MAX_STEPS} requests")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("authorization_url")
    parser.add_argument("--username", default="alice")
    parser.add_argument("--password", default="alice-password-1")
    parser.add_argument("--timeout", type=float, default=10)
    parser.add_argument("--ca-file", help="certificate authorities (PEM) to trust for https instead of the system's")
    arguments = parser.parse_args()
    try:
        print(
            drive(
                arguments.authorization_url, arguments.username, arguments.password, arguments.timeout, arguments.ca_file
            )
        )
    except requests.RequestException as error:
        fail(f"request failed: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
