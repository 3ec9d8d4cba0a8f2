"""The quire wheel, built from ``py/quire`` and ``prompts/``, and zips that are the same bytes every time."""

from __future__ import annotations

import base64
import hashlib
import io
import tomllib
import zipfile
from pathlib import Path

from quire_build.common import ROOT, ZIP_EPOCH


def deterministic_zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, entries[name], compresslevel=9)
    return out.getvalue()


def build_quire_wheel(root: Path = ROOT) -> tuple[str, bytes]:
    """``quire-<version>-py3-none-any.whl`` from ``py/quire`` plus ``prompts/`` as package data."""
    with open(root / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    entries = {}
    for path in sorted((root / "py" / "quire").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in {".py", ".json", ".md", ".txt"}:
            entries[path.relative_to(root / "py").as_posix()] = path.read_bytes()
    for path in sorted((root / "prompts").glob("*.md")):
        entries[f"quire/prompts/{path.name}"] = path.read_bytes()
    dist_info = f"quire-{version}.dist-info"
    entries[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: quire\nVersion: {version}\n".encode()
    entries[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: quire-build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries[f"{dist_info}/top_level.txt"] = b"quire\n"
    record = []
    for name in sorted(entries):
        digest = base64.urlsafe_b64encode(hashlib.sha256(entries[name]).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(entries[name])}")
    record.append(f"{dist_info}/RECORD,,")
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    return f"quire-{version}-py3-none-any.whl", deterministic_zip(entries)
