"""JWT access tokens for django-oauth-toolkit, which issues opaque ones by default.

oauthlib calls the generator from BearerToken.create_token after the grant validated the
request, so request.user is the resource owner for the authorization_code, password and
refresh_token grants, and request.expires_in is the lifetime it is about to answer with.
"""

import functools
import json
import time
import uuid

from django.conf import settings
from jwcrypto import jwt
from oauth2_provider.utils import jwk_from_pem


@functools.cache
def _signing_key():
    return jwk_from_pem(settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"])


def signed_access_token(request, refresh_token=False):
    if request.user is None:
        # Every grant the harness registers has a user; a token without one would carry no sub.
        raise ValueError("access token requested without a resource owner")
    key = _signing_key()
    now = int(time.time())
    client_id = request.client.client_id
    claims = {
        "iss": settings.OAUTH2_PROVIDER["OIDC_ISS_ENDPOINT"],
        # The same value DOT puts in the id_token's sub (OAuth2Validator.get_claim_dict).
        "sub": str(request.user.pk),
        "aud": client_id,
        "azp": client_id,
        "exp": now + int(request.expires_in),
        "iat": now,
        "jti": str(uuid.uuid4()),
        "scope": " ".join(request.scopes or []),
        "preferred_username": request.user.get_username(),
    }
    # The kid is the one the JWKS endpoint publishes, so a verifier finds the key.
    header = {"alg": "RS256", "typ": "JWT", "kid": key.thumbprint()}
    compact = {"separators": (",", ":")}
    token = jwt.JWT(header=json.dumps(header, **compact), claims=json.dumps(claims, **compact))
    token.make_signed_token(key)
    return token.serialize()
