"""A local aiohttp server standing in for ours, for the harness's own tests."""

from __future__ import annotations

from aiohttp import web


async def serve_app(app: web.Application) -> tuple[web.AppRunner, str]:
    """``app`` served on a free local port: its runner (to clean up) and its base URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"
