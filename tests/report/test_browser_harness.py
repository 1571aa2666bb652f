"""tests/browser.py itself: it finds what is wrong with a page (so that a passing page check means
something), and scripts/setup.sh's browser step is idempotent."""
from __future__ import annotations

import base64

import pytest

from tests.browser import Browser, check_page
from tests.conftest import run

pytestmark = [pytest.mark.browser]

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_a_good_page_passes_and_a_bad_one_fails_for_each_reason(tmp_path):
    (tmp_path / "dot.png").write_bytes(PNG)
    (tmp_path / "not-an-image.png").write_text("plain text")
    (tmp_path / "other.html").write_text('<!doctype html><p id="here">x</p>')
    (tmp_path / "good.html").write_text(
        '<!doctype html><title>g</title><img src="dot.png"><a href="other.html#here">o</a><a href="#top" id="top">t</a>'
        '<script>document.title = "ran"</script>')
    (tmp_path / "bad.html").write_text(
        '<!doctype html><title>b</title>'
        '<a href="missing.html">1</a>'               # no such file
        '<a href="other.html#nowhere">2</a>'         # no such element
        '<img src="not-an-image.png">'               # exists, does not load as an image
        '<a href="https://example.org/x">3</a>'      # external
        '<script>console.error("said so"); setTimeout(() => { throw new Error("late failure") }, 0)</script>')
    with Browser() as b:
        good = b.open(tmp_path / "good.html")
        rep = check_page(good)
        assert rep.ok, rep.problems
        assert (rep.links, rep.images) == (3, 1) and good.eval("document.title") == "ran"
        assert 0 < good.load_s < 10
        shot = good.screenshot(tmp_path / "good.png")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        problems = "\n".join(check_page(b.open(tmp_path / "bad.html")).problems)
        for needle in ("no such file", "no element #nowhere in other.html", "image did not load",
                       "external resource", "console.error: said so", "uncaught: Error: late failure"):
            assert needle in problems, (needle, problems)


def test_setup_browser_step_is_idempotent():
    r = run(["bash", "scripts/setup.sh", "browser"])
    assert r.returncode == 0 and r.stdout == "" and "installing" not in r.stderr
