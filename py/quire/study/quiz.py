"""Playing a quiz as pure data: start, answer, score, resume, retry.

A session is a JSON-able dict, so the page can save it after every answer and
pick it up after a reload.  Each finished or abandoned run is kept in
``history`` as an attempt.

>>> items = [{"id": "q1", "type": "true_false", "question": "BM25 ranks.", "options": ["True", "False"], "answer": 0}]
>>> s = start(items, now="2025-01-01T09:00:00Z")
>>> s = answer(s, 0, now="2025-01-01T09:00:05Z")
>>> s["status"], score(s)["correct"]
('finished', 1)
"""

from __future__ import annotations

import copy

from quire.errors import InvalidInput


def start(items: list[dict], now: str, order: list[int] | None = None) -> dict:
    """A new session over ``items`` (in ``order`` if given, e.g. shuffled by the caller)."""
    if not items:
        raise InvalidInput("a quiz needs at least one question")
    order = list(range(len(items))) if order is None else list(order)
    if sorted(order) != list(range(len(items))):
        raise InvalidInput("order must be a permutation of the item positions")
    return {"items": copy.deepcopy(items), "order": order, "position": 0, "answers": [],
            "status": "in_progress", "started": now, "finished": None, "history": []}


def current(session: dict) -> dict | None:
    """The question to show now, or ``None`` when the run is over."""
    if session["status"] != "in_progress":
        return None
    return session["items"][session["order"][session["position"]]]


def answer(session: dict, choice: int | None, now: str) -> dict:
    """Record ``choice`` (an option index; ``None`` = skipped) and move on."""
    item = current(session)
    if item is None:
        raise InvalidInput("this quiz run is already finished")
    if choice is not None and not 0 <= choice < len(item["options"]):
        raise InvalidInput(f"choice {choice} is not an option (0-{len(item['options']) - 1})")
    session = copy.deepcopy(session)
    session["answers"].append({"item": item.get("id", session["order"][session["position"]]),
                               "choice": choice, "correct": choice == item["answer"], "at": now})
    session["position"] += 1
    if session["position"] >= len(session["order"]):
        session["status"], session["finished"] = "finished", now
    return session


def score(session: dict) -> dict:
    """``{"answered", "correct", "skipped", "total", "percent", "wrong": [item ids]}``."""
    answers = session["answers"]
    correct = sum(a["correct"] for a in answers)
    total = len(session["order"])
    return {
        "answered": sum(a["choice"] is not None for a in answers),
        "correct": correct,
        "skipped": sum(a["choice"] is None for a in answers),
        "total": total,
        "percent": round(100 * correct / total) if total else 0,
        "wrong": [a["item"] for a in answers if not a["correct"]],
    }


def resume(session: dict) -> tuple[int, int]:
    """``(questions done, questions in the run)``: where a reloaded page picks up."""
    return session["position"], len(session["order"])


def _archive(session: dict) -> dict:
    return {"started": session["started"], "finished": session["finished"], "status": session["status"],
            "answers": session["answers"], "score": score(session)}


def restart(session: dict, now: str, only_wrong: bool = False) -> dict:
    """A new run of the same quiz (or of just the questions missed), history kept.

    >>> s = start([{"id": "a", "options": ["x", "y"], "answer": 0},
    ...            {"id": "b", "options": ["x", "y"], "answer": 1}], now="t0")
    >>> s = answer(answer(s, 0, "t1"), 0, "t2")
    >>> again = restart(s, "t3", only_wrong=True)
    >>> [again["items"][i]["id"] for i in again["order"]], len(again["history"])
    (['b'], 1)
    """
    wrong = set(score(session)["wrong"])
    order = [i for i in session["order"]
             if not only_wrong or session["items"][i].get("id", i) in wrong]
    if not order:
        raise InvalidInput("no questions were missed, so there is nothing to retry")
    history = session["history"] + [_archive(session)]
    fresh = start(session["items"], now, order=list(range(len(session["items"]))))
    fresh["order"], fresh["history"] = order, history
    return fresh
