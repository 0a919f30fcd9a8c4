"""The ASGI application: Django for HTTP, Channels for the match WebSockets.

Served by Daphne (``daphne config.asgi:application``). WebSocket connections
pass the origin check (``ALLOWED_HOSTS``) and get ``scope["user"]`` from the
session before ``matches.routing`` sees them.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# get_asgi_application() runs django.setup(); everything that touches models
# (the consumers behind matches.routing) must be imported after it.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

import matches.routing  # noqa: E402

# Daphne serves no files itself: with SERVE_STATIC (the default) Django's
# static-files handler answers /static/ from the app and project static folders.
http_app = ASGIStaticFilesHandler(django_asgi_app) if settings.SERVE_STATIC else django_asgi_app

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(matches.routing.websocket_urlpatterns))
        ),
    }
)
