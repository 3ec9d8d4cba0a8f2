"""The engine's services load a module at a time after ready (engine/worker-lazy.js calls
``quire.browser.load_next_service`` once per step, the engine quiet before each), so a page call
waits for one import at most; a call whose service is not in yet loads it itself."""

from __future__ import annotations

from importlib import import_module

from quire.services import BOOT_SERVICES, SERVICES, Methods


def methods_of(service: str) -> set[str]:
    return set(import_module(f"quire.services.{service}").METHODS)


def test_each_step_adds_exactly_the_next_service_and_says_whether_more_remain():
    m = Methods()
    m.load(BOOT_SERVICES)
    known = set(m.names())
    assert known == set().union(*(methods_of(s) for s in SERVICES[:BOOT_SERVICES]))
    for n, service in enumerate(SERVICES[BOOT_SERVICES:], BOOT_SERVICES + 1):
        more = m.load_next()
        assert set(m.names()) - known == methods_of(service), service
        assert more == (n < len(SERVICES)), (service, more)
        known = set(m.names())
    assert m.load_next() is False and set(m.names()) == known  # nothing left: a no-op


def test_a_call_whose_service_is_not_in_yet_loads_it():
    m = Methods()
    m.load(BOOT_SERVICES)
    assert "openLesson" not in m.names()
    assert m.get("openLesson") is import_module("quire.services.study").METHODS["openLesson"]
    assert m.load_next() is False  # the call loaded the rest
