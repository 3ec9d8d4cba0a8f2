"""The engine's event bus (quire.bus): time stamps, coroutine subscribers, failures contained."""

import asyncio

from quire.bus import EventBus


def test_subscribers_get_stamped_copies_and_can_leave():
    bus, seen, other = EventBus(clock=lambda: 7), [], []
    leave = bus.subscribe(seen.append)
    bus.subscribe(seen.append)  # the same subscriber twice is still one
    bus.subscribe(other.append)
    bus.emit({"kind": "chat", "t": 3})
    leave()
    bus.emit({"kind": "export"})
    assert seen == [{"kind": "chat", "t": 3}]
    assert other == [{"kind": "chat", "t": 3}, {"t": 7, "kind": "export"}]
    other[0]["kind"] = "changed"
    assert seen[0]["kind"] == "chat"  # each subscriber has its own copy


def test_coroutine_subscribers_run_as_tasks_and_drain_waits_for_them(caplog):
    async def go():
        bus, done = EventBus(), []

        async def slow(event):
            await asyncio.sleep(0)
            done.append(event["kind"])

        async def broken(event):
            raise RuntimeError("listener bug")
        bus.subscribe(slow)
        bus.subscribe(broken)
        bus.emit({"kind": "card_review"})
        bus.emit({"kind": "chat"})
        before = list(done)
        await bus.drain()
        return before, done
    before, done = asyncio.run(go())
    assert before == [] and done == ["card_review", "chat"]
    assert caplog.text.count("event subscriber failed") == 2  # logged, and the other subscriber still ran


def test_without_a_running_loop_a_coroutine_subscriber_is_dropped_with_a_warning(caplog):
    bus = EventBus()

    async def listener(event):
        raise AssertionError("must not run")
    bus.subscribe(listener)
    bus.emit({"kind": "chat"})
    assert "no event loop" in caplog.text
