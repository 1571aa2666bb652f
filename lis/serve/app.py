"""The HTTP routes (FastAPI): ``POST /v1/chat/completions``, ``GET /v1/models``,
``GET /v1/files/{trajectory_id}/{path}``, ``GET /v1/trajectories/{trajectory_id}``, ``GET /health``.
Every error is OpenAI's JSON shape (:mod:`lis.serve.errors`)."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any, AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from lis.util.text import safe_value
from lis.serve import auth, response
from lis.serve.admission import ShuttingDown
from lis.serve.episodes import Episode
from lis.serve.errors import ApiError, bad_request
from lis.serve.request import ChatRequest, parse
from lis.serve.state import ServeState

log = logging.getLogger("lis.serve")
POLL_S = 0.25          # how often a waiting request checks its client and the episode
KEEPALIVE_S = 10.0     # a streamed answer sends an SSE comment at least this often


async def _read_json(request: Request, limit: int) -> Any:
    size = request.headers.get("content-length")
    if size and size.isdigit() and int(size) > limit:
        raise ApiError(413, f"the request body has {size} bytes; serve.max_body_bytes allows {limit}",
                       code="request_too_large")
    data = bytearray()
    async for part in request.stream():
        data += part
        if len(data) > limit:
            raise ApiError(413, f"the request body exceeds serve.max_body_bytes ({limit} bytes)",
                           code="request_too_large")
    try:
        return safe_value(json.loads(bytes(data) or b"null"))[0]  # "\udcff" is valid JSON: made safe here
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise bad_request(f"the body is not valid JSON ({e.msg if hasattr(e, 'msg') else e}); send a chat "
                          "completion request as application/json") from None
    except RecursionError:  # thousands of nested brackets: the client's fault, not ours
        raise bad_request("the body is nested too deep to be a chat completion request") from None


def create_app(state: ServeState) -> FastAPI:
    s = state.settings

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.start()
        log.info("serving %s (upstream %s, %s sandboxes, %d at once, queue %d) — run %s", s.served_name,
                 state.model.name, state.sandbox.backend, s.max_concurrent, s.max_queue, state.run_id)
        yield
        await state.finish_shutdown()

    app = FastAPI(title="lis serve", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  redirect_slashes=False)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, e: ApiError) -> JSONResponse:
        return JSONResponse(e.body(), status_code=e.status, headers=e.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code, "http_error")
        msg = f"no route {request.method} {request.url.path}" if e.status_code in (404, 405) else str(e.detail)
        return JSONResponse(ApiError(e.status_code, msg, code=code).body(), status_code=e.status_code)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, e: RequestValidationError) -> JSONResponse:
        return JSONResponse(bad_request(f"invalid request: {e.errors()[:1]}").body(), status_code=400)

    @app.exception_handler(Exception)
    async def _bug(request: Request, e: Exception) -> JSONResponse:
        log.exception("unhandled error on %s", request.url.path)
        return JSONResponse(ApiError(500, f"internal error: {type(e).__name__}: {e}", type="server_error",
                                     code="internal_error").body(), status_code=500)

    def _auth(request: Request) -> None:
        auth.check(request.headers.get("authorization"), state.keys)

    def _model() -> dict[str, Any]:
        return {"id": s.served_name, "object": "model", "created": int(state.started), "owned_by": "lis"}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return state.health()

    @app.get("/v1/models")
    async def models(request: Request) -> dict[str, Any]:
        _auth(request)
        return {"object": "list", "data": [_model()]}

    @app.get("/v1/models/{name:path}")
    async def model(name: str, request: Request) -> dict[str, Any]:
        _auth(request)
        if name != s.served_name:
            raise ApiError(404, f"the model {name!r} does not exist; this server serves {s.served_name!r}",
                           code="model_not_found")
        return _model()

    @app.get("/v1/files/{tid}/{path:path}")
    async def files(tid: str, path: str, request: Request) -> FileResponse:
        _auth(request)
        assert state.files is not None
        target = state.files.resolve(tid, path)
        if target is None:
            raise ApiError(404, f"no file {path!r} among the outputs of trajectory {tid!r}", code="file_not_found")
        return FileResponse(target)

    @app.get("/v1/trajectories/{tid}")
    async def trajectory(tid: str, request: Request) -> FileResponse:
        _auth(request)
        assert state.files is not None
        target = state.files.trajectory(tid)
        if target is None:
            raise ApiError(404, f"no trajectory {tid!r} (unknown, still running, or swept)", code="not_found")
        return FileResponse(target, media_type="application/json")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        _auth(request)
        if state.shutting_down:
            raise ApiError(503, "the server is shutting down", type="server_error", code="shutting_down")
        req = parse(await _read_json(request, s.max_body_bytes), s.served_name, s.limits)
        state.counts["requests"] += 1
        assert state.admission is not None and state.runner is not None
        try:
            got = await state.admission.acquire(s.queue_timeout_s, request.is_disconnected, POLL_S)
        except ShuttingDown:
            raise ApiError(503, "the server is shutting down", type="server_error", code="shutting_down") from None
        except ApiError:
            state.counts["rejected"] += 1
            raise
        if not got:
            state.counts["left_while_queued"] += 1
            return Response(status_code=499)
        try:
            ep = state.runner.start(req)
        except BaseException:
            state.admission.release()
            raise
        base = (s.public_url or str(request.base_url)).rstrip("/")
        if req.stream:
            return StreamingResponse(_stream(state, ep, req, base), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        while not ep.future.done():
            await asyncio.wait({ep.future}, timeout=POLL_S)
            if ep.future.done():
                break
            if state.shutting_down:
                ep.stop("the server is shutting down")
                raise ApiError(503, "the server is shutting down; the episode was cancelled", type="server_error",
                               code="shutting_down", extra={"trajectory_id": ep.id})
            if await request.is_disconnected():
                ep.stop("the client disconnected")
                return Response(status_code=499)
        rec = ep.future.result()
        lis = response.extras(rec, state.files.listing(ep.id), base, req.limits, req.ignored)
        err = response.failure(rec, lis, state.shutting_down)
        if err is not None:
            raise err
        return JSONResponse(response.completion(rec, s.served_name, lis))

    return app


async def _stream(state: ServeState, ep: Episode, req: ChatRequest, base: str) -> AsyncIterator[str]:
    """Server-sent events: the role at once, SSE comments with the agent's progress while the episode
    runs (clients skip them), then the answer, a finish chunk with ``usage`` and ``lis``, the usage
    chunk OpenAI sends for ``stream_options.include_usage``, and ``[DONE]``."""
    name, created = state.settings.served_name, int(time.time())
    try:
        yield response.chunk(ep.id, name, created, {"role": "assistant", "content": ""})
        turns, last = 0, time.monotonic()
        while not ep.future.done():
            await asyncio.wait({ep.future}, timeout=POLL_S)
            if ep.future.done():
                break
            if state.shutting_down:
                ep.stop("the server is shutting down")
                yield response.error_event(ApiError(503, "the server is shutting down; the episode was cancelled",
                                                    type="server_error", code="shutting_down"))
                yield response.DONE
                return
            if ep.turns != turns:
                turns, last = ep.turns, time.monotonic()
                yield f": turn {turns}: {ep.last_tools}\n\n"
            elif time.monotonic() - last > KEEPALIVE_S:
                last = time.monotonic()
                yield ": keep-alive\n\n"
        rec = ep.future.result()
        assert state.files is not None
        lis = response.extras(rec, state.files.listing(ep.id), base, req.limits, req.ignored)
        err = response.failure(rec, lis, state.shutting_down)
        if err is not None:
            yield response.error_event(err)
            yield response.DONE
            return
        if rec.answer:
            yield response.chunk(ep.id, name, created, {"content": rec.answer})
        usage, _ = response.usage(rec)
        yield response.chunk(ep.id, name, created, {}, response.finish_reason(rec), usage=usage, lis=lis)
        if req.include_usage:
            yield response.chunk(ep.id, name, created, None, usage=usage)
        yield response.DONE
    finally:
        if not ep.future.done():
            ep.stop("the client disconnected")
