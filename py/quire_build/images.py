"""Wheels as file images: one blob the worker writes straight into Pyodide's site-packages,
so nothing is unzipped in Python while the engine starts."""

from __future__ import annotations

import fnmatch
import io
import json
import zipfile

IMAGE_MAGIC = b"QFS1"


def stripped(names, patterns: list[str]) -> list[str]:
    """The names no pattern matches (fnmatch; ``*`` crosses ``/``)."""
    return [n for n in names if not any(fnmatch.fnmatchcase(n, pat) for pat in patterns)]


def file_image(files: dict[str, bytes]) -> bytes:
    """Files as one blob the worker writes straight into Pyodide's file system:
    ``QFS1``, a little-endian u32 header length, a JSON list of ``[path, size]`` and
    the contents back to back.  Paths are relative to site-packages.

    >>> file_image({"a/b.py": b"x = 1"})[8:]
    b'[["a/b.py",5]]x = 1'
    """
    names = sorted(files)
    header = json.dumps([[n, len(files[n])] for n in names], separators=(",", ":")).encode()
    return IMAGE_MAGIC + len(header).to_bytes(4, "little") + header + b"".join(files[n] for n in names)


def read_image(image: bytes) -> dict[str, bytes]:
    """Inverse of :func:`file_image`."""
    if image[:4] != IMAGE_MAGIC:
        raise ValueError("not a file image")
    size = int.from_bytes(image[4:8], "little")
    at, files = 8 + size, {}
    for name, length in json.loads(image[8:8 + size]):
        files[name] = image[at:at + length]
        at += length
    return files


def wheel_files(wheel: bytes, patterns: list[str]) -> dict[str, bytes]:
    """What installing the wheel would write, less the stripped files."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        return {n: archive.read(n) for n in stripped(names, patterns)}


def image_asset(file_name: str) -> str:
    return f"images/{file_name}.files"
