"""Google Gemini through its OpenAI-compatible endpoint, replayed (tests/fixtures/gemini, sources and
what is ours in its README): the root ``/v1beta/openai`` kept as typed, the key as Bearer, a
non-strict json_schema, a streamed cited reply, and Google's own error shapes (a wrong key is a 400
``API_KEY_INVALID`` in a list; a 429 carries ``RetryInfo``).  Nothing reaches Google."""

import asyncio
import json
from pathlib import Path

from quire.app import Quire
from quire.services import Context
from quire.services import chat as chat_service
from quire.store import MemoryStore

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gemini"
ROOT = "https://generativelanguage.googleapis.com/v1beta/openai"
KEY = "AIzaSy-test-0123456789"


class _Resp:
    def __init__(self, status, body):
        self.status, self._body = status, body

    async def json(self):
        return json.loads(self._body)

    async def text(self):
        return self._body

    async def iter_lines(self):
        for line in self._body.split("\n"):
            yield line

    async def close(self):
        pass


class Google:
    """What generativelanguage.googleapis.com/v1beta/openai answers, from the fixtures."""

    def __init__(self):
        self.sent, self.limited = [], False

    async def request(self, method, url, body=None, stream=False, headers=None):
        self.sent.append({"method": method, "url": url, "body": body, "headers": dict(headers or {})})
        if (headers or {}).get("Authorization") != f"Bearer {KEY}":
            return _Resp(400, (FIXTURES / "error_400_key.json").read_text())
        if self.limited:
            return _Resp(429, (FIXTURES / "error_429.json").read_text())
        if url == ROOT + "/models":
            return _Resp(200, (FIXTURES / "models.json").read_text())
        if url == ROOT + "/chat/completions":
            return _Resp(200, (FIXTURES / "stream_chat.sse").read_text())
        return _Resp(404, '[{"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}}]')


def test_gemini_key_refused_connected_answer_schema_and_quota():
    google = Google()

    async def main():
        q = await Quire.open(MemoryStore(), transport=google)
        await q.stage_text("Biology", "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells.")
        await q.train()
        await q.llm.save({"url": ROOT, "kind": "openai", "chat_model": "models/gemini-2.0-flash", "api_key": "AIza-wrong"},
                         confirm="https://generativelanguage.googleapis.com")
        wrong = await q.llm.status()
        await q.llm.save({"api_key": KEY})
        right = await q.llm.status()
        answer = await chat_service.METHODS["ask"](q, Context(emit=lambda e: None), "What do mitochondria make?", {})
        stream = q.llm.client().chat("models/gemini-2.0-flash", [{"role": "user", "content": "x"}],
                                     format={"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}}})
        await stream.collect()
        google.limited = True
        limited = await q.llm.status()
        return wrong, right, answer, limited

    wrong, right, answer, limited = asyncio.run(main())
    assert wrong["status"] == "key_refused" and "API key not valid" in wrong["message"]
    assert right["status"] == "connected" and right["provider"] == "Google Gemini" and right["has_key"] is True
    assert [m["name"] for m in right["models"]] == ["models/gemini-2.0-flash", "models/text-embedding-004"]
    assert answer["mode"] == "llm" and answer["answer"] == "Mitochondria make ATP [1]." and answer["citations"]
    chat = [s for s in google.sent if s["url"].endswith("/chat/completions")][-1]
    assert chat["body"]["response_format"]["json_schema"]["strict"] is False  # OpenAI-style strict refuses maxLength
    assert chat["headers"] == {"Authorization": f"Bearer {KEY}"}
    assert limited["status"] == "rate_limited" and "Wait 35s " in limited["fix"]
    assert KEY not in json.dumps([wrong, right, limited], default=str)


def test_gemini_429_as_observed_from_its_openai_endpoint_has_no_wait_so_the_fix_says_a_minute():
    """The list-wrapped 429 a user recorded from /v1beta/openai/chat/completions (fixtures README): no
    RetryInfo, so Quire gives no figure of its own making."""
    from quire.llm.diagnosis import diagnose
    from quire.llm.parse import http_error

    err = http_error(429, (FIXTURES / "error_429_observed.json").read_text())
    assert str(err) == "Resource has been exhausted (e.g. check quota)." and err.retry_after is None
    d = diagnose(None, reachable=True, cors_ok=False, error=err, kind="openai", has_key=True, base_url=ROOT)
    assert d.status == "rate_limited" and d.fix.startswith("Wait a minute and try again")


def test_a_tool_call_as_gemini_sends_it_one_frame_with_no_index_and_the_usage():
    """A frame captured from Gemini's OpenAI-compatible stream (fixtures README): the whole call, the
    finish reason and the usage in one chunk, the call without OpenAI's ``index``.  One call comes
    out, whole, and the usage reaches the end of the reply."""
    from quire.llm.events import Done, ToolCalls
    from quire.llm.parse import OpenAIDecoder

    decoder, events = OpenAIDecoder(), []
    for line in (FIXTURES / "recorded_tool_call.sse").read_text().split("\n"):
        events += decoder.feed(line)
    events += decoder.close()
    calls = [e for e in events if isinstance(e, ToolCalls)]
    assert len(calls) == 1 and [(c.name, c.arguments, c.id) for c in calls[0].calls] == [
        ("glob", {"pattern": "*"}, "function-call-18439433602034082669")]
    done = [e for e in events if isinstance(e, Done)]
    assert len(done) == 1 and done[0].reason == "tool_calls" and done[0].stats["prompt_tokens"] == 3379


def test_a_used_up_daily_quota_says_its_wait_in_hours_not_68408_seconds():
    """A recorded 429 of a per-day quota (fixtures README): RetryInfo says "68408s"."""
    from quire.llm.diagnosis import diagnose
    from quire.llm.parse import http_error

    err = http_error(429, (FIXTURES / "error_429_daily.json").read_text())
    assert err.retry_after == "19 h 1 min" and "generate_requests_per_model_per_day" in str(err)
    d = diagnose(None, reachable=True, cors_ok=False, error=err, kind="openai", has_key=True, base_url=ROOT)
    assert d.status == "rate_limited" and d.fix.startswith("Wait 19 h 1 min (the server's own figure)")
