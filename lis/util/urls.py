"""What makes a model server's base URL usable, checked when a model is configured (params, the CLI,
``OpenAIChatModel``) rather than discovered after a round of connection retries."""
from __future__ import annotations

from urllib.parse import urlsplit

EXAMPLE = "http://127.0.0.1:8000/v1"


def base_url_problem(url: object) -> str | None:
    """Why ``url`` cannot be an OpenAI-compatible server's base URL, or None when it can: it must be a
    string with the scheme http or https, a host, and (if given) a port that is a number."""
    if not isinstance(url, str):
        return f"it is a {type(url).__name__}, not a URL"
    if not url.strip():
        return "it is empty"
    if url != url.strip() or any(c.isspace() or ord(c) < 32 for c in url):
        return "it contains whitespace or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        return f"it does not parse as a URL ({e})"
    if parts.scheme not in ("http", "https"):
        if not parts.scheme or "://" not in url:
            return "it has no http:// or https:// scheme"
        return f"its scheme is {parts.scheme!r}, not http or https"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "its port is 0"
    return None
