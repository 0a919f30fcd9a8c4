"""People and clients for the social tests: alice, bob, carol (tests/conftest.py).

``api(user)`` is a Django test client logged in as ``user``, with ``post_json``.
The embedded default (in-memory channel layer, no background loops) is on for
every test here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.support import use_embedded_default


@pytest.fixture(autouse=True)
def embedded_default(settings: Any, tmp_path: Any) -> Any:
    settings.VAPID_PRIVATE_KEY_FILE = str(tmp_path / "vapid_private.pem")
    return use_embedded_default(settings)


class Api(Client):
    def post_json(self, path: str, body: Any = None) -> Any:
        return self.post(path, json.dumps(body or {}), content_type="application/json")


@pytest.fixture
def api(db: Any) -> Callable[[Any], Api]:
    def make(user: Any) -> Api:
        c = Api()
        c.force_login(user)
        return c

    return make
