"""The ASGI application: Django for HTTP, Channels for the match WebSockets.

Served by Daphne (``python -m config.serve``, or ``daphne config.asgi:application``).
The WebSocket consumers check the origin and read the session themselves
(``matches/realtime/socket_auth.py``), so that a refused socket gets a close code
(4401, 4403) rather than a failed handshake.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from config.http_threads import get_asgi_application  # noqa: E402

# get_asgi_application() runs django.setup() and returns Django's handler with each
# request's thread taken from a pool (config/http_threads.py); everything that
# touches models (the consumers behind matches.routing) must be imported after it.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

import matches.realtime.routing  # noqa: E402
import tournaments.routing  # noqa: E402
from config import daphne_close  # noqa: E402
from config.throttle import PasswordThrottle  # noqa: E402

daphne_close.install()  # 1012 and 1013 closes (config/daphne_close.py)

# Daphne serves no files itself: with SERVE_STATIC (the default) WhiteNoise's middleware
# (config/settings.py) answers /static/ from STATIC_ROOT, hashed and compressed.
http_app = django_asgi_app
if settings.PASSWORD_THROTTLE_DELAY_MS:
    # A password flood waits before Django sees it, off the matches' CPU.
    http_app = PasswordThrottle(
        http_app,
        free=settings.PASSWORD_THROTTLE_FREE,
        delay_s=settings.PASSWORD_THROTTLE_DELAY_MS / 1000,
        trusted_proxies=settings.TRUSTED_PROXY_COUNT,
    )

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": URLRouter(
            matches.realtime.routing.websocket_urlpatterns
            + tournaments.routing.websocket_urlpatterns
        ),
    }
)
