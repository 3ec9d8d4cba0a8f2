"""quire.unpack on CPython: an archive unpacked in steps gives the same files as one
zipfile extract, the wheel's INSTALLER, and its shared libraries, in Pyodide's way (its three
helpers from pyodide._package_loader stood in for by the same rules)."""

import types
import zipfile

import pytest

from quire.unpack import Unpacking


@pytest.fixture
def pyodide_helpers():
    loader = types.SimpleNamespace(calls=[])
    calls = loader.calls

    def set_wheel_installer(filename, archive, target, installer, source):
        calls.append(("installer", filename, installer, source))
        if installer:
            (target / "demo-1.0.dist-info" / "INSTALLER").write_text(installer)

    loader.set_wheel_installer = set_wheel_installer
    loader.install_datafiles = lambda filename, archive, target: calls.append(("data", filename))
    loader.should_load_dynlib = lambda path: str(path).endswith(".so")
    return loader


def wheel(folder, files):
    path = folder / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


FILES = {"demo/__init__.py": "x = 1\n", "demo/sub/": "", "demo/sub/table.bin": bytes(range(256)) * 4000,
         "demo/_fast.cpython-312-wasm32-emscripten.so": b"\0asm\1\0\0\0", "demo-1.0.dist-info/METADATA": "Name: demo\n",
         "demo.libs/libhelper.so": b"\0asm\1\0\0\0"}


def test_one_file_per_step_with_no_budget_and_the_same_files_as_an_extract(tmp_path, pyodide_helpers):
    path = wheel(tmp_path, FILES)
    job = Unpacking(str(path), path.name, str(tmp_path / "site"), budget_s=0)
    steps = 1
    while not job.step():
        steps += 1
    assert steps == len(FILES)  # a step writes at least one file and stops once over its budget
    libs = job.finish(pyodide_helpers, installer="pyodide.loadPackage", source="pyodide")
    assert [p.rsplit("/", 1)[1] for p in libs] == ["_fast.cpython-312-wasm32-emscripten.so", "libhelper.so"]
    assert all(p.startswith(str((tmp_path / "site").resolve())) for p in libs)
    zipfile.ZipFile(path).extractall(tmp_path / "reference")
    for name in FILES:
        if not name.endswith("/"):
            assert (tmp_path / "site" / name).read_bytes() == (tmp_path / "reference" / name).read_bytes(), name
    assert ("installer", path.name, "pyodide.loadPackage", "pyodide") in pyodide_helpers.calls
    assert (tmp_path / "site" / "demo-1.0.dist-info" / "INSTALLER").read_text() == "pyodide.loadPackage"


def test_a_generous_budget_is_one_step(tmp_path, pyodide_helpers):
    path = wheel(tmp_path, FILES)
    job = Unpacking(str(path), path.name, str(tmp_path / "site"), budget_s=60)
    assert job.step() is True
    assert len(job.finish(pyodide_helpers)) == 2
    assert ("data", path.name) in pyodide_helpers.calls and not (tmp_path / "site" / "demo-1.0.dist-info" / "INSTALLER").exists()


def test_an_entry_outside_the_folder_is_refused(tmp_path, pyodide_helpers):
    path = wheel(tmp_path, {"demo/ok.py": "", "../evil.py": "boom"})
    job = Unpacking(str(path), path.name, str(tmp_path / "site"), budget_s=60)
    with pytest.raises(ValueError, match="points outside"):
        job.step()
    assert not (tmp_path / "evil.py").exists()
