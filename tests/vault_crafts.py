"""Crafted vaults, made at test time the way anyone could: plain sha256 checksums, all valid.

Shared by the CPython and Chromium vault tests."""

import functools
import hashlib
import io
import json
import struct
import zipfile

from quire import vault

EVIL = "http://evil.example:8080"
HOSTILE_PAGE = {"quire.llm.url": EVIL + "/", "quire.allowUrlFetch": "1", "quire.maxFileMB": "300",
                "quire.privacy.confirmed": EVIL}
HOSTILE_SETTINGS = {"llm": {"url": EVIL, "kind": "openai", "chat_model": "exfiltrate", "embed_model": "steal"},
                    "page.localStorage": HOSTILE_PAGE, "network": {"allow": "*"}}


def crafted(buckets: dict, blobs: dict | None = None) -> bytes:
    """A vault with valid checksums holding whatever the crafter wants."""
    return vault.pack(buckets, blobs or {}, created="2025-01-01T00:00:00Z", app_version="0.1.0")


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def with_members(members: dict[str, bytes]) -> bytes:
    """A format-2 vault around raw members (bucket JSON given as bytes), checksums all valid."""
    meta = {"format": vault.FORMAT, "version": vault.VERSION, "created": "2025-01-01T00:00:00Z", "app_version": "0.1.0",
            "counts": {"buckets": {}, "blobs": 0, "blob_bytes": 0},
            "checksums": {n: hashlib.sha256(d).hexdigest() for n, d in sorted(members.items())}}
    meta["checksum"] = vault._meta_checksum(meta)
    return zipped({"vault.json": vault.canonical(meta), **members})


def deep_json(levels: int = 5000) -> bytes:
    """``{"x": [[[[...]]]]}``: a 5.9 KB bucket that crashed the engine's parser."""
    return b'{"x":' + b"[" * levels + b"]" * levels + b"}"


def nested_vault(levels: int = 5000) -> bytes:
    return with_members({"buckets/settings.json": deep_json(levels)})


@functools.lru_cache(maxsize=2)
def bomb_vault(mib: int = 300) -> bytes:
    """One bucket member of ``mib`` MiB of spaces: a few hundred KiB on disk."""
    return with_members({"buckets/settings.json": b'{"a":"' + b" " * (mib << 20) + b'"}'})


def lying_size(data: bytes, size: int = 0xFFFF_FFF0) -> bytes:
    """``data`` with every central-directory entry claiming ``size`` uncompressed bytes."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        struct.pack_into("<I", out, at + 24, size)
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


def at_version(data: bytes, version: int) -> bytes:
    """``data`` (a vault ``pack`` wrote) labelled as format ``version``, checksums still valid:
    how an older Quire's file looks when its members are laid out as today's (format 2 and 3 are)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = {**json.loads(members["vault.json"]), "version": version}
    meta["checksum"] = vault._meta_checksum(meta)
    return zipped({**members, "vault.json": vault.canonical(meta)})


def old_passages(records: list[dict]) -> list[dict]:
    """Passage records as Train and vault format 2 wrote them before format 3: the id keyed "id"."""
    return [{**{k: v for k, v in r.items() if k != "chunk_id"}, "id": r["chunk_id"]} for r in records]


def v2_vault(buckets: dict, blobs: dict | None = None) -> bytes:
    """A vault as Quire exported it before format 3: format 2, passages keyed "id"."""
    chunks = {sid: old_passages(cs) for sid, cs in (buckets.get("chunks") or {}).items()}
    return at_version(crafted({**buckets, "chunks": chunks} if chunks else buckets, blobs), 2)


def meta_json(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return json.loads(zf.read("vault.json"))


def tampered(data: bytes, member_prefix: str = "buckets/chunks") -> bytes:
    """``data`` with one member changed after export (a passage's text edited), its listed checksum
    left as it was: what someone editing a course vault by hand would make."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {i.filename: zf.read(i.filename) for i in zf.infolist()}
    name = next(n for n in members if n.startswith(member_prefix))
    members[name] = members[name].replace(b"a", b"A", 1)
    return zipped(members)
