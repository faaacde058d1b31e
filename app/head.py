"""HEAD wherever GET is: the GET answer's status and headers, without its body (RFC 9110 9.3.2).

FastAPI routes a method only where it is declared, so `HEAD /t/{id}` was a 405. Asking the app
for GET and dropping the body gives every GET route, the static files and every middleware's
headers (compression, tags, security) to HEAD at once, and they can never disagree.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """Goes outside every middleware whose headers HEAD must repeat (compression, tags)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] in ("http.response.body", "http.response.pathsend"):
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        # the server keeps its own scope, so it still knows this is HEAD (and sends no body)
        await self.app({**scope, "method": "GET"}, receive, headers_only)
