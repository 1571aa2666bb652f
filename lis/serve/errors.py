"""Errors in the OpenAI wire shape: ``{"error": {"message", "type", "param", "code"}}``."""
from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An HTTP error answered as OpenAI does; ``extra`` goes under the body's ``lis`` key."""

    def __init__(self, status: int, message: str, type: str = "invalid_request_error", code: str | None = None,
                 param: str | None = None, headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": {"message": self.message, "type": self.type, "param": self.param,
                                         "code": self.code}}
        if self.extra:
            out["lis"] = self.extra
        return out


def bad_request(message: str, param: str | None = None, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, code=code, param=param)
