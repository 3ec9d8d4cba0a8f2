"""A teacher's course vault, made at test time by the engine on CPython: two documents under
"Earth 101", a quiz the teacher already played, a chat and a setting of the teacher's own.

Shared by the CPython, build and browser tests of courses (tests/test_vault_course.py,
test_build_library.py, test_course_browser.py, test_engines_course.py)."""

import asyncio
import base64

from quire.app import Quire
from quire.store import MemoryStore
from quire.services import Context, study

from test_study_service import BIO

VOLCANO = ("# Volcanoes\n"
           "A shield volcano is built from fluid basalt lava that flows a long way before it cools. "
           "Mauna Loa in Hawaii is the largest shield volcano on Earth and rises gently over many kilometres. "
           "Stratovolcanoes erupt sticky andesite lava, which piles up into steep cones around the vent. "
           "Mount Fuji in Japan is a famous stratovolcano whose last eruption happened in the year 1707. "
           "Pyroclastic flows are fast clouds of hot gas and ash that race down the slopes of a volcano. "
           "Magma that reaches the surface is called lava, while magma that stays underground forms plutons. "
           "Geologists measure ground swelling with satellites to warn people before an eruption begins. "
           "Volcanic ash makes soils very fertile, which is why farmers often live near active volcanoes. "
           "Calderas form when the roof of an emptied magma chamber collapses after a huge eruption. "
           "Hot springs and geysers appear where groundwater is heated by magma deep below the surface.")


async def call(q, method, *args, payload=None):
    return await study.METHODS[method](q, Context(payload=payload), *args)


async def teacher_vault() -> tuple[bytes, dict]:
    """``(vault bytes, the quiz as made)``: the teacher's library exported as a vault."""
    q = await Quire.open(MemoryStore())
    await q.stage_text("Rocks", BIO, "Earth 101")
    await q.stage_text("Volcanoes", VOLCANO, "Earth 101")
    await q.train()
    quiz = await call(q, "studyGenerate", "quiz", {"count": 2, "scope": {"category": "Earth 101"}})
    await call(q, "quizAnswer", quiz["id"], 0)
    await q.store.commit([("chats", "teacher-chat", {"id": "teacher-chat", "title": "Teacher's own", "messages": []})])
    await q.llm.save({"chat_model": "teachers-model"})
    data = base64.b64decode((await q.export_vault())["base64"])
    return data, quiz


def course_vault() -> tuple[bytes, dict]:
    """:func:`teacher_vault`, from synchronous code."""
    return asyncio.run(teacher_vault())
