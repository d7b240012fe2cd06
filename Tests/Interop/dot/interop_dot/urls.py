"""URLs: DOT under /o/ (the issuer includes /o), Django's login form at /accounts/login/."""

from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import views as oauth2_views

urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # RFC 8414 section 3.1 puts the metadata of issuer http://host/o at the origin's
    # /.well-known/oauth-authorization-server/o; DOT also answers under /o/.
    path(
        ".well-known/oauth-authorization-server/o",
        oauth2_views.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata-root",
    ),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
]
