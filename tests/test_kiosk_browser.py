"""Kiosk mode: tests/kiosk_demo.py, run as the script it is, drives a whole demo (sample library,
question, quiz) on a served bundle; in kiosk mode no destructive control is visible anywhere."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT, wait_ready

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang,quiz_word,source,passage", [
    ("de", "richtig", "Der Wasserkreislauf (Beispiel).md", "500.000 Kubikkilometer"),
    ("en", "correct", "Quire user guide (sample).md", "Staging and training are two separate steps")])
def test_kiosk_demo_script_runs_a_whole_demo(lang, quiz_word, source, passage, built_dist, serve):
    """The demo asks the first suggested question, which is in the page's language."""
    url = serve(built_dist).url
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "kiosk_demo.py"), "--url", url, "--lang", lang],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["destructive_visible"] == []
    assert source in result["answer"] and passage in result["answer"], result["answer"]
    assert quiz_word in result["quiz_score"]


def test_without_kiosk_the_destructive_controls_are_there(context, built_dist, serve, page_log):
    """The kiosk test above would pass on a page that never shows them: check that it does."""
    page = page_log.attach(context.new_page())
    page.goto(serve(built_dist).url)
    wait_ready(page)
    assert page.evaluate("quire.kiosk") is False
    assert page.get_by_test_id("erase-all").is_visible()
    assert not page_log.errors
