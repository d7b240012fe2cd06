"""Django settings for the django-oauth-toolkit server the interop tests run against.

Configured like a strict modern issuer: PKCE required, refresh tokens rotated with reuse
protection and no grace period, RS256 id_tokens, opaque access tokens (DOT's default; signed
JWTs with run.py --jwt-access-tokens). run.py sets the
environment below before Django reads this module:

DOT_STATE_DIR                    the run's temporary directory (sqlite database, RSA key)
DOT_ISSUER                       http://127.0.0.1:PORT/o, or https://127.0.0.1:FRONT/o behind a proxy
DOT_ACCESS_TOKEN_EXPIRE_SECONDS  access token lifetime, default 300
DOT_BEHIND_TLS_PROXY             1 behind a TLS-terminating reverse proxy (nginx, Tests/Interop/dot/nginx.conf)
"""

import os
import secrets
from pathlib import Path

STATE_DIR = Path(os.environ["DOT_STATE_DIR"])
ISSUER = os.environ["DOT_ISSUER"]
ACCESS_TOKEN_EXPIRE_SECONDS = int(os.environ.get("DOT_ACCESS_TOKEN_EXPIRE_SECONDS", "300"))

BASE_DIR = Path(__file__).resolve().parent

# A fresh secret per run: nothing signed by one run is ever valid in another.
SECRET_KEY = secrets.token_urlsafe(50)
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

# Behind a TLS-terminating reverse proxy, as Django's deployment checklist has it: the proxy sets
# X-Forwarded-Proto (and overwrites whatever a client sent), Django takes the request as https from
# it, and the session and CSRF cookies are sent over https only.
if os.environ.get("DOT_BEHIND_TLS_PROXY") == "1":
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

ROOT_URLCONF = "interop_dot.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ],
        },
    },
]
WSGI_APPLICATION = None

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": STATE_DIR / "db.sqlite3",
        "OPTIONS": {"timeout": 20},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Each login hashes a password; MD5 turns half a second of PBKDF2 into microseconds. Test only.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

LOGIN_URL = "/accounts/login/"

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": (STATE_DIR / "oidc-rsa.pem").read_text(),
    # The issuer is fixed, never derived from the Host header, so "localhost" and
    # "127.0.0.1" requests see the same iss.
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "PKCE_REQUIRED": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "ACCESS_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_EXPIRE_SECONDS,
    # Loopback redirect URIs (RFC 8252) are plain http.
    "ALLOWED_SCHEMES": ["http", "https"],
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Profile",
        "email": "Email",
        "offline_access": "A refresh token",
        "read": "Read",
        "write": "Write",
    },
    "DEFAULT_SCOPES": ["openid"],
    # RFC 9700 behaviour DOT 3.4 has behind switches (on by default in 4.0). The password
    # grant stays on: it is the quickest way for a test to obtain a first refresh token.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
}

# Access tokens are opaque, as DOT issues them by default. With run.py --jwt-access-tokens
# they are signed JWTs instead (as Keycloak's are): the second case the tests cover. oauthlib
# falls back to the access token generator for refresh tokens unless one is named, so the
# refresh tokens stay opaque either way.
if os.environ.get("DOT_JWT_ACCESS_TOKENS") == "1":
    OAUTH2_PROVIDER["ACCESS_TOKEN_GENERATOR"] = "interop_dot.access_tokens.signed_access_token"
    OAUTH2_PROVIDER["REFRESH_TOKEN_GENERATOR"] = "oauthlib.oauth2.rfc6749.tokens.random_token_generator"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.request": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        "oauth2_provider": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}
