"""A request whose client has gone is stopped, not finished.

Starlette runs an endpoint to its end even after the client has closed the connection: nobody
cancels it, and its `receive` is only read if the endpoint asks. So a client that asks for an
expensive page (a drawing, a run, an export) and hangs up at once, over and over, would keep
the server working for nobody. This middleware listens for the disconnect once the request's
body has been read, and cancels the request's task when it comes before the answer is sent;
the work it was awaiting is cancelled with it (app/page_cache.py cancels a shared render only
once every request waiting for it has gone).
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = asyncio.Event()
        answered = False
        # once the listener reads `receive`, the app reads what it read from here
        unread: asyncio.Queue[Message] = asyncio.Queue()
        listener: asyncio.Task | None = None

        async def listen() -> None:
            while True:
                message = await receive()
                unread.put_nowait(message)  # a bodiless request's one empty body message
                if message["type"] == "http.disconnect":
                    gone.set()
                    if not answered:
                        request.cancel()
                    return

        def start_listening() -> None:
            nonlocal listener
            if listener is None:
                listener = asyncio.ensure_future(listen())

        async def app_receive() -> Message:
            if listener is not None:
                if gone.is_set() and unread.empty():
                    return {"type": "http.disconnect"}  # as often as it is asked
                return await unread.get()
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                start_listening()  # the body is in: from now on, only a disconnect can come
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        request = asyncio.ensure_future(self.app(scope, app_receive, tracked_send))
        if not _has_body(scope):
            start_listening()
        try:
            await request
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling() or not gone.is_set():
                raise  # the server is stopping this request, not its client
        finally:
            if listener is not None:
                listener.cancel()


def _has_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value != b"0"):
            return True
    return False
