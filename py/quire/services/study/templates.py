"""Prompt templates: list them, read one, keep or reset a person's override."""

from __future__ import annotations

from quire import prompts
from quire.errors import InvalidInput
from quire.study.generate import TEMPLATE_VARIABLES

from .common import OVERRIDES_KEY, STUDY_TEMPLATES, prompt_overrides


# ---------------------------------------------------------------- prompt templates
async def _templates(engine, ctx):
    overrides = await prompt_overrides(engine)
    return [{"name": n, "variables": sorted(TEMPLATE_VARIABLES[n]), "overridden": n in overrides} for n in STUDY_TEMPLATES]


def _check_template_name(name: str) -> None:
    if name not in STUDY_TEMPLATES:
        raise InvalidInput(f"unknown template {name!r}; choose one of: {', '.join(STUDY_TEMPLATES)}")


async def _template(engine, ctx, name):
    _check_template_name(name)
    overrides = await prompt_overrides(engine)
    default = prompts.load(name)
    return {"name": name, "text": overrides.get(name, default), "default": default, "overridden": name in overrides,
            "variables": sorted(TEMPLATE_VARIABLES[name])}


async def _save_override(engine, ctx, name, text):
    """Keep a person's edit; it must use exactly the variables the code passes."""
    _check_template_name(name)
    prompts.render_text(text, {v: "" for v in TEMPLATE_VARIABLES[name]}, name=f"your {name} template")
    overrides = {**await prompt_overrides(engine), name: text}
    await engine.store.commit([("settings", OVERRIDES_KEY, overrides)])
    return await _template(engine, ctx, name)


async def _reset_override(engine, ctx, name):
    _check_template_name(name)
    overrides = {k: v for k, v in (await prompt_overrides(engine)).items() if k != name}
    await engine.store.commit([("settings", OVERRIDES_KEY, overrides)])
    return await _template(engine, ctx, name)


METHODS = {
    "promptTemplates": _templates,
    "promptTemplate": _template,
    "savePromptOverride": _save_override,
    "resetPromptOverride": _reset_override,
}
