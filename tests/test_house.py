"""The engine's house rules, read from the source: no import circle (function-level imports
included), no private name used outside the module that defines it, and only
``quire.browser`` touching the browser (``js``, ``pyodide``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "py"
PACKAGE = "quire"


def modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = (ast.parse(path.read_text(encoding="utf-8")), path.name == "__init__.py")
    return {name: tree for name, (tree, _) in out.items()} | {"__packages__": {n for n, (_, p) in out.items() if p}}


MODULES = modules()
PACKAGES = MODULES.pop("__packages__")


def imports(name: str, tree: ast.Module):
    """``(imported module, imported name or None, line)`` for every import in the module."""
    package = name if name in PACKAGES else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                yield base, alias.name, node.lineno


def edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, tree in MODULES.items():
        for module, imported, _ in imports(name, tree):
            target = f"{module}.{imported}" if f"{module}.{imported}" in MODULES else module
            if target in MODULES and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def defined_in(tree: ast.Module) -> set[str]:
    """Names a module defines for itself: its functions and classes, and ``self.<name>`` attributes."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return names


def test_the_engine_has_no_import_circle():
    """A circle (library -> library_index -> repair -> library was one) means two modules
    cannot be read, or changed, one without the other."""
    graph = edges()
    assert any(graph.values())  # the reading finds imports at all
    assert cycles(graph) == []


def test_the_reader_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_is_imported_from_another_module():
    crossing = [f"{name}:{line} imports {module}.{imported}" for name, tree in MODULES.items()
                for module, imported, line in imports(name, tree)
                if imported and private(imported) and module.startswith(PACKAGE)]
    assert crossing == []


def mine(value: ast.expr) -> bool:
    return isinstance(value, ast.Name) and value.id in ("self", "cls")


def private_reaches(tree: ast.Module, own: set[str] | None = None) -> list[ast.AST]:
    """``obj._name`` with ``obj`` not ``self``/``cls``; with ``own``, only names the module does not
    define.  Also ``obj.__dict__["_name"]`` (or ``.get``/``.setdefault`` of such a key): the same
    reach, which services used to keep their state on the engine."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and (own is None or node.attr not in own):
            if not mine(node.value):
                found.append(node)
        elif isinstance(node, (ast.Subscript, ast.Call)):
            target = node.value if isinstance(node, ast.Subscript) else node.func
            key = node.slice if isinstance(node, ast.Subscript) else (node.args[0] if node.args else None)
            if isinstance(node, ast.Call):  # obj.__dict__.get("_x") / .setdefault("_x", ...)
                if not (isinstance(target, ast.Attribute) and target.attr in ("get", "setdefault", "pop")):
                    continue
                target = target.value
            if (isinstance(target, ast.Attribute) and target.attr == "__dict__" and not mine(target.value)
                    and isinstance(key, ast.Constant) and isinstance(key.value, str) and private(key.value)):
                found.append(node)
    return found


def test_no_private_attribute_of_another_module_is_reached():
    """``obj._name`` where ``_name`` belongs to a class of another module: use a public name."""
    reaches = [f"{name}:{node.lineno} {ast.unparse(node)}" for name, tree in MODULES.items()
               for node in private_reaches(tree, defined_in(tree))]
    assert reaches == []


def test_no_private_attribute_of_another_object_is_reached():
    """Not even within one module: a function that needs another object's state asks it through a
    method (``BM25Index.live_postings`` was a module function reading seven of its fields)."""
    reaches = [f"{name}:{node.lineno} {ast.unparse(node)}" for name, tree in MODULES.items()
               for node in private_reaches(tree)]
    assert reaches == []


def test_the_reader_finds_a_reach():
    tree = ast.parse("class A:\n    def f(self, other):\n        return self._x + other._x\n")
    assert [ast.unparse(n) for n in private_reaches(tree)] == ["other._x"]
    tree = ast.parse("def f(engine):\n    engine.__dict__['_a'] = engine.__dict__.get('_b') or engine.__dict__['c']\n"
                     "    self.__dict__.setdefault('_d', 1)\n    engine.__dict__.setdefault('_e', 1)\n")
    assert sorted(ast.unparse(n) for n in private_reaches(tree)) == [
        "engine.__dict__.get('_b')", "engine.__dict__.setdefault('_e', 1)", "engine.__dict__['_a']"]


def test_only_quire_browser_touches_the_browser():
    outside = [f"{name}:{line} imports {module}" for name, tree in MODULES.items()
               if not (name == f"{PACKAGE}.browser" or name.startswith(f"{PACKAGE}.browser."))
               for module, _, line in imports(name, tree) if module.split(".")[0] in ("js", "pyodide")]
    assert outside == []
