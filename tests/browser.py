"""Load local HTML pages in a real headless Chromium and check them (tests of the viewer and the report).

Chromium is Debian's package (``scripts/setup.sh browser`` installs it; ``$LIS_CHROMIUM`` names
another binary). It is driven through the DevTools protocol over ``--remote-debugging-pipe``
(file descriptors 3 and 4, NUL-separated JSON): no chromedriver, no websocket library, no port.

    with Browser() as b:
        page = b.open(path)              # navigates to file://path, waits for the load event
        page.eval("document.title")      # any JavaScript; the page's own scripts have run
        page.screenshot(tmp / "p.png")
        report = check_page(page)         # JS errors, failed loads, broken href/src, images not loaded
        assert report.ok, report.problems

Everything the page reports on its own is collected while it is open: uncaught exceptions
(``Runtime.exceptionThrown``), ``console.error``, log entries of level error (a resource that did
not load is one), and failed network loads. The flags are those this machine's Chromium needs
headless and offline (no sandbox as root, no GPU, no background networking).
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urlparse

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--no-default-browser-check",
         "--window-size=1280,1024", "--remote-debugging-pipe"]


class BrowserError(AssertionError):
    """Chromium is missing, did not start, or did not answer in time."""


def chromium_binary() -> str:
    exe = os.environ.get("LIS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise BrowserError("no chromium on PATH: run `bash scripts/setup.sh browser` (Debian/Ubuntu as root: "
                           "apt-get install chromium) or set LIS_CHROMIUM")
    return exe


class _Pipe:
    """The DevTools protocol over the two pipes: commands by id, events to the listeners."""

    def __init__(self, write_fd: int, read_fd: int):
        self._w = os.fdopen(write_fd, "wb", buffering=0)
        self._r = os.fdopen(read_fd, "rb", buffering=0)
        self._next = 0
        self._lock = threading.Lock()
        self._replies: dict[int, dict] = {}
        self._cond = threading.Condition()
        self.events: list[dict] = []
        self.closed = False
        self._thread = threading.Thread(target=self._read, daemon=True, name="cdp-reader")
        self._thread.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._r.read(1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout_s: float = 30.0) -> dict:
        with self._lock:
            self._next += 1
            mid = self._next
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    raise BrowserError(f"chromium gave no answer to {method} within {timeout_s:.0f}s"
                                       + (" (it exited)" if self.closed else ""))
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def wait_event(self, method: str, session: str | None, since: int, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for ev in self.events[since:]:
                    if ev.get("method") == method and ev.get("sessionId") == session:
                        return ev
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    raise BrowserError(f"no {method} within {timeout_s:.0f}s")
                self._cond.wait(left)

    def close(self) -> None:
        for f in (self._w, self._r):
            try:
                f.close()
            except OSError:
                pass


@dataclass
class Page:
    """One loaded page: its path, the time it took to load, and what it reported while open."""

    browser: "Browser"
    path: Path
    session: str
    target: str
    load_s: float
    _first_event: int

    def eval(self, expression: str, timeout_s: float = 30.0) -> Any:
        """The value of a JavaScript expression (promises awaited); an exception fails the test."""
        r = self.browser._pipe.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                         "awaitPromise": True}, self.session, timeout_s)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise AssertionError(f"JavaScript failed in {self.path.name}: "
                                 f"{(d.get('exception') or {}).get('description') or d.get('text')}")
        return r.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 30.0, poll_s: float = 0.25) -> Any:
        """The first truthy value of a JavaScript expression, polled until ``timeout_s`` (pages that
        render after they load: a single-page app fetching its data)."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.eval(expression)
            if value or time.monotonic() >= deadline:
                return value
            time.sleep(poll_s)

    def screenshot(self, out: Path) -> Path:
        data = self.browser._pipe.send("Page.captureScreenshot", {"format": "png"}, self.session)["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def errors(self) -> list[str]:
        """Uncaught exceptions, console.error calls, error log entries and failed loads, so far."""
        out = []
        for ev in self.browser._pipe.events[self._first_event:]:
            if ev.get("sessionId") != self.session:
                continue
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"uncaught: {(d.get('exception') or {}).get('description') or d.get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description")))
                                                        for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                e = p["entry"]
                out.append(f"log: {e.get('text')} {e.get('url') or ''}".strip())
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                out.append(f"load failed: {p.get('errorText')} ({p.get('type')})")
        return out

    def close(self) -> None:
        self.browser._pipe.send("Target.closeTarget", {"targetId": self.target})


class Browser:
    """One headless Chromium for many pages (starting it costs about a second)."""

    def __init__(self, timeout_s: float = 30.0):
        self.timeout_s = timeout_s
        self._profile = tempfile.mkdtemp(prefix="lis-chromium-")
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        for fd in (cmd_r, res_w):  # the child's ends above 9, so that moving them onto 3 and 4 clobbers nothing
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            cmd_r, res_w = (high, res_w) if fd == cmd_r else (cmd_r, high)
        exe = chromium_binary()
        # fds 3 and 4 of the child are the protocol's pipes (chromium reads 3, writes 4)
        self._proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{cmd_r} 4>&{res_w} {cmd_r}<&- {res_w}>&-', exe, *FLAGS,
             f"--user-data-dir={self._profile}", "about:blank"],
            pass_fds=(cmd_r, res_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True)
        os.close(cmd_r)
        os.close(res_w)
        self._pipe = _Pipe(cmd_w, res_r)
        try:
            self.version = self._pipe.send("Browser.getVersion", timeout_s=timeout_s)["product"]
        except BrowserError as e:
            err = self._stderr_tail()
            self.close()
            raise BrowserError(f"chromium did not start ({e}): {err}") from None

    def _stderr_tail(self) -> str:
        try:
            self._proc.wait(timeout=2)
            return (self._proc.stderr.read() or b"").decode(errors="replace")[-500:]
        except subprocess.TimeoutExpired:
            return "(still running)"

    def open(self, path: Path | str, settle_s: float = 0.2) -> Page:
        """A new tab on ``file://path``: returns once the load event fired (and scripts ran)."""
        path = Path(path).resolve()
        if not path.is_file():
            raise AssertionError(f"no page at {path}")
        return self.open_url(path.as_uri(), settle_s, path)

    def open_url(self, url: str, settle_s: float = 0.2, path: Path | None = None) -> Page:
        """A new tab on ``url`` (a local server's page): returns once the load event fired."""
        pipe = self._pipe
        t0 = time.monotonic()
        target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            pipe.send(f"{domain}.enable", session=session)
        first = len(pipe.events)
        pipe.send("Page.navigate", {"url": url}, session)
        pipe.wait_event("Page.loadEventFired", session, first, self.timeout_s)
        load_s = time.monotonic() - t0
        time.sleep(settle_s)  # late console errors of scripts run on load
        return Page(self, path or Path(urlparse(url).path), session, target, load_s, first)

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._pipe.send("Browser.close", timeout_s=5)
            except BrowserError:
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, 9)
                self._proc.wait(timeout=10)
        self._pipe.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- static checks of what a page refers to ------------------------------------------------------
class _Ids(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)


def _ids(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        p = _Ids()
        p.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = p.ids
    return cache[path]


@dataclass
class PageReport:
    path: Path
    load_s: float
    links: int = 0
    images: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


_REFS_JS = """[...document.querySelectorAll('[href],[src]')].map(e => ({
    tag: e.tagName.toLowerCase(), attr: e.hasAttribute('href') ? 'href' : 'src',
    raw: e.getAttribute(e.hasAttribute('href') ? 'href' : 'src'),
    url: e.hasAttribute('href') ? e.href : e.src,
    loaded: e.tagName === 'IMG' ? (e.complete && e.naturalWidth > 0) : null}))"""


def check_page(page: Page, allow_external: bool = False) -> PageReport:
    """Everything a page refers to resolves, and nothing went wrong while it loaded:

    - every ``href``/``src`` is a file that exists (and a ``#fragment`` names an element of it);
      ``http(s)`` URLs are problems unless ``allow_external`` (pages must open offline);
    - every ``<img>`` loaded (complete, with a width);
    - no JavaScript exception, ``console.error``, error log entry or failed load.
    """
    rep = PageReport(page.path, page.load_s)
    cache: dict[Path, set[str]] = {}
    for ref in page.eval(_REFS_JS):
        rep.links += 1
        url, frag = urldefrag(ref["url"])
        u = urlparse(url)
        where = f"{ref['tag']} {ref['attr']}={ref['raw']!r}"
        if u.scheme in ("http", "https"):
            if not allow_external:
                rep.problems.append(f"{where}: external resource (pages must open offline)")
            continue
        if u.scheme in ("data", "javascript", "mailto", "about", "blob"):
            continue
        if u.scheme != "file":
            rep.problems.append(f"{where}: unexpected scheme {u.scheme!r}")
            continue
        target = Path(unquote(u.path))
        if not target.is_file():
            rep.problems.append(f"{where}: no such file {target}")
            continue
        if frag and target.suffix in (".html", ".htm") and unquote(frag) not in _ids(target, cache):
            rep.problems.append(f"{where}: no element #{unquote(frag)} in {target.name}")
        if ref["tag"] == "img":
            rep.images += 1
            if not ref["loaded"]:
                rep.problems.append(f"{where}: image did not load")
    rep.problems += page.errors()
    return rep
