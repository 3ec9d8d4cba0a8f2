"""Every shipped prompt template renders with exactly the variables its code passes."""

import pytest

from quire import prompts
from quire.study.generate import TEMPLATE_VARIABLES, template_values

TEMPLATES = sorted(prompts.template_dir().glob("*.md"))


def test_templates_are_found():
    assert TEMPLATES, f"no templates in {prompts.template_dir()}"


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_template_matches_code(path):
    task = path.stem
    assert task in TEMPLATE_VARIABLES, f"prompts/{task}.md has no entry in study.generate.TEMPLATE_VARIABLES"
    used = prompts.variables(path.read_text(encoding="utf-8"))
    assert used == TEMPLATE_VARIABLES[task]
    rendered = prompts.render(task, {name: f"<{name}>" for name in TEMPLATE_VARIABLES[task]})
    assert "$" not in rendered.replace("$$", "")


@pytest.mark.parametrize("task", sorted(TEMPLATE_VARIABLES))
def test_every_registered_task_has_a_template(task):
    assert (prompts.template_dir() / f"{task}.md").is_file()


@pytest.mark.parametrize("kind", ["quiz", "flashcards", "workshop_outline", "workshop_lesson", "mindmap"])
def test_study_code_passes_the_registered_variables(kind):
    values = template_values(kind, "[1] text", count=5, difficulty="easy", scope="notes")
    assert set(values) == TEMPLATE_VARIABLES[kind]
    prompts.render(kind, values)
