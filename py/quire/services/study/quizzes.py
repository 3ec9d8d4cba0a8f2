"""Quiz play: answer, submit, restart."""

from __future__ import annotations

from quire.study import quiz
from quire.study.validate import StudyError

from .common import record_action, iso_time, load_set, utc_now, save_set


# ---------------------------------------------------------------- quiz play
def _public_session(record: dict) -> dict:
    s = record["session"]
    return {"session": s, "score": quiz.score(s), "position": quiz.resume(s)[0], "total": quiz.resume(s)[1],
            "current": quiz.current(s), "history": s["history"]}


async def _quiz_answer(engine, ctx, set_id, choice, now=None):
    record = await load_set(engine, set_id)
    item = quiz.current(record["session"])
    if item is None:
        raise StudyError("This quiz run is finished; start it again to play once more.")
    record["session"] = quiz.answer(record["session"], choice, iso_time(utc_now(now)))
    await save_set(engine, record)
    correct = choice == item["answer"]
    record_action(engine, record, "quiz_answer", correct=correct, item=item.get("id"))
    if record["session"]["status"] == "finished":
        sc = quiz.score(record["session"])
        record_action(engine, record, "quiz_complete", score=sc["correct"], total=sc["total"])
    return {"correct": correct, "answer": item["answer"], "explanation": item.get("explanation", ""),
            "chunk_ids": item.get("chunk_ids", []), **_public_session(record)}


async def _quiz_submit(engine, ctx, set_id, now=None):
    """Finish the run now; unanswered questions count as skipped."""
    record = await load_set(engine, set_id)
    skipped = 0
    while quiz.current(record["session"]) is not None:
        record["session"] = quiz.answer(record["session"], None, iso_time(utc_now(now)))
        skipped += 1
    await save_set(engine, record)
    if skipped:  # finished here rather than by the last answer
        sc = quiz.score(record["session"])
        record_action(engine, record, "quiz_complete", score=sc["correct"], total=sc["total"])
    return _public_session(record)


async def _quiz_restart(engine, ctx, set_id, only_wrong=False, now=None):
    record = await load_set(engine, set_id)
    s = record["session"]
    if s["status"] != "finished" and not s["answers"]:
        return _public_session(record)
    record["session"] = quiz.restart(s, iso_time(utc_now(now)), only_wrong=bool(only_wrong))
    await save_set(engine, record)
    return _public_session(record)


METHODS = {
    "quizAnswer": _quiz_answer,
    "quizSubmit": _quiz_submit,
    "quizRestart": _quiz_restart,
}
