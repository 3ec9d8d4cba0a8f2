"""tests/screenshots.py, run as the script it is, makes the README's first-run pictures in both languages."""

import struct
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser


def test_screenshot_script_makes_both_languages(built_dist, serve, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "screenshots.py"), "--url", serve(built_dist).url,
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["first-run-de.png", "first-run-en.png", "sample-library-de.png", "sample-library-en.png"]
    for p in tmp_path.iterdir():
        head = p.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (1280, 800)
    # The two languages really differ (a German page that fell back to English would be identical).
    assert (tmp_path / "first-run-de.png").read_bytes() != (tmp_path / "first-run-en.png").read_bytes()
