"""tests/real/provision.py unpacks the llama.cpp sdist with the rule of tarfile's ``filter="data"``
by hand, because Debian 12's own Python (3.11.2) has no ``filter=``."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "real"))
import provision  # noqa: E402


def make_tar(path: Path, *members: tuple[str, bytes | None, bytes]) -> Path:
    """(name, content or None for a folder, type) as a .tar.gz."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = data.decode()
                tar.addfile(info)
            elif data is None:
                info.mode = 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o4777  # setuid and world-writable: both dropped
                tar.addfile(info, io.BytesIO(data))
    return path


def test_plain_files_and_folders_are_unpacked_without_special_bits(tmp_path):
    sdist = make_tar(tmp_path / "ok.tar.gz", ("pkg", None, tarfile.DIRTYPE),
                     ("pkg/CMakeLists.txt", b"project(x)\n", tarfile.REGTYPE))
    out = tmp_path / "out"
    out.mkdir()
    provision.unpack(sdist, out)
    made = out / "pkg" / "CMakeLists.txt"
    assert made.read_bytes() == b"project(x)\n"
    assert made.stat().st_mode & 0o7777 == 0o755


@pytest.mark.parametrize("member", [
    ("../outside.txt", b"x", tarfile.REGTYPE),
    ("/tmp/absolute.txt", b"x", tarfile.REGTYPE),
    ("pkg/link", b"/etc/passwd", tarfile.SYMTYPE),
])
def test_a_member_outside_the_folder_or_a_link_is_refused_before_anything_is_written(tmp_path, member):
    sdist = make_tar(tmp_path / "bad.tar.gz", ("pkg/first.txt", b"1", tarfile.REGTYPE), member)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="refusing"):
        provision.unpack(sdist, out)
    assert list(out.iterdir()) == []
    assert not (tmp_path / "outside.txt").exists()
