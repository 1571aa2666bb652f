"""scripts/uv_args.py: pip's configuration carried over to uv, or refused so that pip installs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "uv_args.py"


def uv_args(text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT)], input=text, capture_output=True, text=True, check=False)


def test_pip_settings_become_uv_words_the_last_value_winning():
    r = uv_args("global.find-links='/opt/wheels'\n"
                "global.extra-index-url='file:///a/simple file:///b/simple'\n"
                "global.constraint='/etc/c.txt'\n"
                "global.cert='/etc/ca.crt'\n"
                "global.index-url='https://old/simple'\n"
                ":env:.index-url='https://mirror/simple'\n"
                ":env:.default-timeout='180'\n")
    assert r.returncode == 0, r.stderr
    words = r.stdout.splitlines()
    assert words[:2] == ["--index-strategy", "unsafe-best-match"]  # pip searches every index
    pairs = list(zip(words[2::2], words[3::2]))
    assert ("--find-links", "/opt/wheels") in pairs and ("--constraints", "/etc/c.txt") in pairs
    assert ("--extra-index-url", "file:///a/simple") in pairs and ("--extra-index-url", "file:///b/simple") in pairs
    assert ("--default-index", "https://mirror/simple") in pairs and ("--default-index", "https://old/simple") not in pairs
    assert "ENV SSL_CERT_FILE=/etc/ca.crt" in words and not any("180" in w for w in words)


def test_a_setting_uv_cannot_take_is_refused_so_that_pip_installs():
    r = uv_args("global.find-links='/opt/wheels'\nglobal.proxy='http://proxy:3128'\n")
    assert r.returncode == 3 and r.stdout == ""
    assert "proxy" in r.stderr


def test_no_configuration_is_pypi_alone():
    r = uv_args("")
    assert r.returncode == 0 and r.stdout.split() == ["--index-strategy", "unsafe-best-match"]
