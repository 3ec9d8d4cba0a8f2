"""Prompt templates: ``prompts/<task>.md`` with named ``$variables``.

Rendering is strict both ways: a variable the template uses but the caller did
not pass is an error, and so is a variable the caller passed that the template
never uses (it usually means a typo on one side).

>>> render_text("Hello $name", {"name": "Ada"})
'Hello Ada'
"""

from __future__ import annotations

import string
from pathlib import Path

from quire.errors import QuireError

_PACKAGED = Path(__file__).with_name("prompts")  # inside the built wheel
_SOURCE = Path(__file__).resolve().parents[2] / "prompts"  # in a source checkout


class PromptError(QuireError, ValueError):
    """A template and the variables given to it do not match: the user's own template (an
    override in Study) names a variable Quire does not give, so it is theirs to fix, not a bug."""


def template_dir() -> Path:
    return _PACKAGED if _PACKAGED.is_dir() else _SOURCE


def variables(text: str) -> set[str]:
    """Names a template uses.  ``$$`` is a literal dollar sign.

    >>> sorted(variables("$a and ${b}, $$5"))
    ['a', 'b']
    """
    names = set()
    for match in string.Template.pattern.finditer(text):
        if match.group("invalid") is not None:
            line = text[: match.start()].count("\n") + 1
            raise PromptError(f"stray '$' on line {line}: write $$ for a literal dollar sign")
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
    return names


def render_text(text: str, values: dict, *, name: str = "template") -> str:
    used = variables(text)
    missing = sorted(used - values.keys())
    unknown = sorted(values.keys() - used)
    if missing:
        raise PromptError(f"{name}: no value given for ${', $'.join(missing)}")
    if unknown:
        raise PromptError(f"{name}: it does not use ${', $'.join(unknown)}")
    return string.Template(text).substitute({k: str(v) for k, v in values.items()})


def load(task: str, overrides: dict | None = None) -> str:
    """The template text for ``task``; a person's saved override wins."""
    if overrides and task in overrides:
        return overrides[task]
    path = template_dir() / f"{task}.md"
    if not path.is_file():
        known = sorted(p.stem for p in template_dir().glob("*.md"))
        raise PromptError(f"no prompt template {task!r}; known: {', '.join(known) or 'none'}")
    return path.read_text(encoding="utf-8")


def render(task: str, values: dict, overrides: dict | None = None) -> str:
    return render_text(load(task, overrides), values, name=f"prompts/{task}.md")
