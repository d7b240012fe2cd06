"""Creates the user and the clients the interop tests use; running it twice changes nothing."""

from django.contrib.auth import get_user_model
from oauth2_provider.models import get_application_model

USERNAME = "alice"
PASSWORD = "alice-password-1"
CODE_CLIENT_ID = "vault-code"
PASSWORD_CLIENT_ID = "vault-password"
# A confidential client: the code flow with a client secret (DOT stores only its hash).
CONFIDENTIAL_CLIENT_ID = "vault-confidential"
CONFIDENTIAL_CLIENT_SECRET = "confidential-secret-of-the-interop-tests"
# DOT matches a loopback IP redirect URI on any port (RFC 8252 section 7.3), so the
# client's ephemeral listener port needs no registration; path and query must match.
DEFAULT_REDIRECT_URIS = ["http://127.0.0.1/callback"]


def bootstrap(extra_redirect_uris=()):
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=USERNAME)
    if not user.check_password(PASSWORD):
        user.set_password(PASSWORD)
        user.save()

    application = get_application_model()
    redirect_uris = " ".join(dict.fromkeys([*DEFAULT_REDIRECT_URIS, *extra_redirect_uris]))
    application.objects.update_or_create(
        client_id=CODE_CLIENT_ID,
        defaults={
            "name": "CredentialVault code flow",
            "client_type": application.CLIENT_PUBLIC,
            "authorization_grant_type": application.GRANT_AUTHORIZATION_CODE,
            "client_secret": "",
            "redirect_uris": redirect_uris,
            "post_logout_redirect_uris": redirect_uris,
            "skip_authorization": True,
            "algorithm": application.RS256_ALGORITHM,
        },
    )
    application.objects.update_or_create(
        client_id=PASSWORD_CLIENT_ID,
        defaults={
            "name": "CredentialVault password grant",
            "client_type": application.CLIENT_PUBLIC,
            "authorization_grant_type": application.GRANT_PASSWORD,
            "client_secret": "",
            "redirect_uris": "",
            "skip_authorization": True,
            "algorithm": application.RS256_ALGORITHM,
        },
    )
    application.objects.update_or_create(
        client_id=CONFIDENTIAL_CLIENT_ID,
        defaults={
            "name": "CredentialVault confidential client",
            "client_type": application.CLIENT_CONFIDENTIAL,
            "authorization_grant_type": application.GRANT_AUTHORIZATION_CODE,
            "client_secret": CONFIDENTIAL_CLIENT_SECRET,
            "redirect_uris": redirect_uris,
            "post_logout_redirect_uris": redirect_uris,
            "skip_authorization": True,
            "algorithm": application.RS256_ALGORITHM,
        },
    )
