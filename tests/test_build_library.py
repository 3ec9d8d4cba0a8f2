"""build.py --library VAULT [--library-title TEXT] [--library-only]: a bundle that carries a course.

The course is checked with the engine's own vault reader and refused with the reason when damaged,
tampered, empty or too large; it is packed like every other big asset, listed in the manifest and the
service worker's list with its sha256, and described in QUIRE_BUNDLE.course.  --library-only puts it
into a bundle already built, giving the same bytes as a whole build."""

import hashlib
import json
import re
import shutil
import sys

import pytest

from conftest import LEAN_BUILD, ROOT
from course_vaults import course_vault
from vault_crafts import tampered

sys.path.insert(0, str(ROOT))
import build  # noqa: E402
from quire_build import library  # noqa: E402
from quire_build.pack import unpack  # noqa: E402

PACK = "assets/pack/course/course.quirevault.js"


@pytest.fixture(scope="module")
def vault_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("course") / "course.quirevault"
    path.write_bytes(course_vault()[0])
    return path


def bundle_of(dist) -> dict:
    return library.read_bundle(dist)


def snapshot(dist) -> dict:
    return {p.relative_to(dist).as_posix(): p.read_bytes() for p in sorted(dist.rglob("*")) if p.is_file()}


def test_library_only_adds_the_course_with_its_hash_everywhere(lean_dist, vault_file, tmp_path, capsys):
    dist = shutil.copytree(lean_dist, tmp_path / "dist")
    before = snapshot(dist)
    data = vault_file.read_bytes()
    assert build.main(["--dist", str(dist), "--library", str(vault_file), "--library-title", "Earth 101",
                       "--library-only"]) == 0
    assert "carries course 'Earth 101' (2 documents" in capsys.readouterr().out
    after = snapshot(dist)
    # Only the course's pack and the three lists naming it changed.
    assert {n for n in after if after[n] != before.get(n)} == {PACK, "assets/bundle.js", "sw.js", "manifest.json"}
    sha = hashlib.sha256(data).hexdigest()
    b = bundle_of(dist)
    assert b["course"] == {"asset": "course/course.quirevault", "title": "Earth 101", "documents": 2,
                           "passages": b["course"]["passages"], "sets": 1, "made": b["course"]["made"],
                           "sha256": sha, "size": len(data)}
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", b["course"]["made"]) and b["course"]["passages"] >= 2
    assert b["assets"]["course/course.quirevault"]["sha256"] == sha
    assert unpack(after[PACK]) == ("course/course.quirevault", data)
    manifest = json.loads(after["manifest.json"])
    assert manifest["files"][PACK] == {"size": len(after[PACK]), "sha256": hashlib.sha256(after[PACK]).hexdigest()}
    assert manifest["build"] == b["build"] != bundle_of(lean_dist)["build"]
    sw = after["sw.js"].decode()
    assert PACK in json.loads(re.search(r"var FILES = (\[.*?\]);", sw).group(1))
    assert f"var BUILD = '{b['build']}'" in sw
    # Without --library, --library-only takes the course out again: the bundle as it was built.
    assert build.main(["--dist", str(dist), "--library-only"]) == 0
    assert snapshot(dist) == before


def test_a_whole_build_with_the_course_is_the_same_bytes(lean_dist, vault_file, tmp_path):
    whole, added = tmp_path / "whole", shutil.copytree(lean_dist, tmp_path / "added")
    assert build.main(["--dist", str(whole), *LEAN_BUILD, "--library", str(vault_file)]) == 0
    assert build.main(["--dist", str(added), "--library", str(vault_file), "--library-only"]) == 0
    assert snapshot(whole) == snapshot(added)
    assert bundle_of(whole)["course"]["title"] == "Earth 101"  # the category its documents share


@pytest.mark.parametrize("case, reason", [
    ("tampered", "cannot be a course: checksum mismatch for buckets/chunks.json"),
    ("not a vault", "cannot be a course"),
    ("oversized", "MB a course vault may have"),
    ("missing", "No such file"),
])
def test_a_bad_vault_is_refused_with_the_reason(lean_dist, vault_file, tmp_path, capsys, monkeypatch, case, reason):
    dist = shutil.copytree(lean_dist, tmp_path / "dist")
    before = snapshot(dist)
    bad = tmp_path / "bad.quirevault"
    if case == "tampered":
        bad.write_bytes(tampered(vault_file.read_bytes()))
    elif case == "not a vault":
        bad.write_bytes(b"PK\x03\x04 not really a zip")
    elif case == "oversized":
        bad.write_bytes(vault_file.read_bytes())
        monkeypatch.setattr(library, "MAX_COURSE_BYTES", 1024)
    assert build.main(["--dist", str(dist), "--library", str(bad), "--library-only"]) == 1
    assert reason in capsys.readouterr().err
    assert snapshot(dist) == before


def test_library_only_needs_a_built_bundle(vault_file, tmp_path, capsys):
    assert build.main(["--dist", str(tmp_path / "nothing"), "--library", str(vault_file), "--library-only"]) == 1
    assert "holds no built bundle" in capsys.readouterr().err


def test_a_title_needs_a_vault(capsys):
    with pytest.raises(SystemExit):
        build.main(["--library-title", "Biology 101"])
    assert "--library-title needs --library" in capsys.readouterr().err


def test_a_vault_without_trained_documents_is_refused(tmp_path):
    from quire_build.common import BuildError
    from vault_crafts import crafted

    with pytest.raises(BuildError, match="holds no trained documents"):
        library.check_course(crafted({"sources": {}}))
