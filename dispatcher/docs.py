"""The API's documentation pages (/docs, /redoc): served from local assets, and kept there.

fastapi-offline serves Swagger UI and ReDoc from files in its wheel. ReDoc's bundle still
names one image on a CDN (its "API docs by Redocly" logo); a Content-Security-Policy on the
pages stops the browser from asking for it, or for anything else off this server.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Inline script and style: Swagger UI's page starts itself with an inline script. Workers
# from blob: URLs: ReDoc's search index runs in one.
POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; frame-ancestors 'none'"
)


class DocsPolicy:
    """Adds the documentation pages' Content-Security-Policy to the responses of `paths`."""

    def __init__(self, app: ASGIApp, paths: tuple[str, ...]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return

        async def with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                policy = (b"content-security-policy", POLICY.encode())
                message["headers"] = [*message.get("headers", []), policy]
            await send(message)

        await self.app(scope, receive, with_policy)
