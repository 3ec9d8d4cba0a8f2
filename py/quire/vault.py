"""Everything a person keeps in Quire, as one file they can save and bring back.

A vault is a zip with fixed timestamps and sorted members, so the same
content gives the same bytes:

- ``vault.json``: ``{"format": "quire-vault", "version": 3, "created", "app_version",
  "counts", "checksums": {member: sha256}, "checksum"}``; ``checksum`` is the
  sha256 of this same JSON (canonical, without ``checksum``), so it covers every
  member's hash and the counts.
- ``buckets/<name>.json``: one IndexedDB store, ``{key: value}`` as canonical JSON.
- ``blobs/<bucket>/<key>``: raw bytes (originals, index bytes, vectors); the key is
  percent-encoded so any key (``"model:tag|hash"``) is one safe member name.

Format 1 held each bucket as a list of ``{"key", "value"}`` records; format 2 keyed each
passage's id ``"id"``, format 3 ``"chunk_id"`` (``quire.passages``).

Reading checks everything (zip integrity, format, version, each checksum,
counts) before returning anything, and the import (``quire.services.vault``)
plans only from a vault that passed, so a bad file changes nothing.  A vault is a stranger's file
as much as any document: members are inflated through ``SafeZip`` with the
vault's own ``LIMITS`` (below), and every JSON member's size and nesting depth
are checked before it is parsed (``quire.jsonlimits``).  Older versions are migrated
step by step (``MIGRATIONS``); a newer version is refused.

>>> data = pack({"settings": {"theme": "dark"}}, {"originals/a.txt": b"hi"}, created="2025-01-01T00:00:00Z")
>>> buckets, blobs, meta = unpack(data)
>>> buckets, blobs, meta["counts"]["blobs"]
({'settings': {'theme': 'dark'}}, {'originals/a.txt': b'hi'}, 1)
>>> p = plan(to_store(buckets, blobs), current={"settings": {"theme": "light", "font": "big"}}, mode="replace")
>>> p["puts"][1], p["deletes"]
(('settings', 'theme', 'dark'), [('settings', 'font')])
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from urllib.parse import quote, unquote
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

from quire import jsonlimits, passages
from quire.errors import QuireError
from quire.extract.base import MB, ExtractError, Limits, SafeZip

FORMAT = "quire-vault"
VERSION = 3  # what this app writes; it reads 1..VERSION
MODES = ("merge", "replace")
META = "vault.json"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest zip timestamp: members carry no real time
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")

# A vault legitimately holds the whole library (originals, one vector per passage), so its
# limits are wider than a document's but still finite; the whole file is held in the tab's
# memory, and a wasm32 tab has 4 GB at most.
LIMITS = Limits(
    max_zip_entries=500_000,              # 1 vector per passage: 5,000 sources x 100 passages, twice over
    max_unzipped_bytes=2 * 1024 * MB,     # declared sizes, and bytes really inflated (a member may lie)
)
MAX_RATIO = 200       # inflated/compressed bytes of one member; text, PDFs and vectors deflate a few to a few tens of times
RATIO_FLOOR = 4 * MB  # small members may compress better (an empty index, a run of zero bytes)
MAX_META_BYTES = 128 * MB  # vault.json: checksums of 500,000 members


class VaultError(QuireError):
    """A vault that cannot be read or imported; the message says why, for the person."""


def canonical(obj: Any) -> bytes:
    """Deterministic strict JSON (sorted keys, no NaN), UTF-8.

    >>> canonical({"b": 1, "a": "é"})
    b'{"a":"\\xc3\\xa9","b":1}'
    """
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _split_blob_key(key: str) -> tuple[str, str]:
    """``"<bucket>/<key>"`` -> ``(bucket, key)``; the inner key may be any non-empty string."""
    bucket, _, inner = key.partition("/") if isinstance(key, str) else ("", "", "")
    if not _NAME.match(bucket) or not inner:
        raise VaultError(f"blob key {key!r} must be '<bucket>/<key>' (bucket: letters, digits, '_', '.', '-')")
    return bucket, inner


def _blob_member(key: str) -> str:
    """The zip member for a blob: the inner key percent-encoded, so any key is one safe file name.

    >>> _blob_member("vectors/nomic-embed-text:latest|ab12")
    'blobs/vectors/nomic-embed-text%3Alatest%7Cab12'
    """
    bucket, inner = _split_blob_key(key)
    return f"blobs/{bucket}/{quote(inner, safe='')}"


def _blob_key(member: str) -> str:
    bucket, _, encoded = member[len("blobs/"):].partition("/")
    key = f"{bucket}/{unquote(encoded)}"
    if not encoded or _blob_member(key) != member:
        raise VaultError(f"unexpected member {member} in the vault")
    return key


def _meta_checksum(meta: dict) -> str:
    return sha256(canonical({k: v for k, v in meta.items() if k != "checksum"}))


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in [META] + sorted(n for n in members if n != META):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.create_system = 3  # the same on every platform
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, members[name], compresslevel=6)
    return out.getvalue()


def pack(buckets: Mapping[str, Mapping[str, Any]], blobs: Mapping[str, bytes], *,
         created: str | datetime | None = None, app_version: str | None = None) -> bytes:
    """The vault file for ``buckets`` (store name -> {key: JSON value}) and ``blobs`` (key -> bytes)."""
    if app_version is None:
        from quire import __version__ as app_version
    if created is None:
        created = datetime.now(timezone.utc)
    if isinstance(created, datetime):
        created = created.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    members: dict[str, bytes] = {}
    for name, entries in buckets.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise VaultError(f"bucket name {name!r} must be letters, digits, '_', '.', '-'")
        if not all(isinstance(k, str) for k in entries):
            raise VaultError(f"bucket {name!r}: keys must be strings")
        try:
            members[f"buckets/{name}.json"] = canonical(dict(entries))
        except (TypeError, ValueError) as exc:
            raise VaultError(f"bucket {name!r} holds a value that is not plain JSON ({exc})") from None
    for key, data in blobs.items():
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise VaultError(f"blob {key!r} is {type(data).__name__}, not bytes")
        members[_blob_member(key)] = bytes(data)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "created": created,
        "app_version": app_version,
        "counts": _counts(buckets, blobs),
        "checksums": {name: sha256(data) for name, data in sorted(members.items())},
    }
    meta["checksum"] = _meta_checksum(meta)
    members[META] = canonical(meta)
    return _zip(members)


def _counts(buckets: Mapping, blobs: Mapping) -> dict:
    return {"buckets": {name: len(entries) for name, entries in sorted(buckets.items())},
            "blobs": len(blobs), "blob_bytes": sum(len(b) for b in blobs.values())}


# --- reading ---------------------------------------------------------------------

def _members(data) -> dict[str, bytes]:
    """Every member's bytes, read within ``LIMITS``; a refusal says which limit and why."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise VaultError(f"a vault is bytes, not {type(data).__name__}")
    try:
        z = SafeZip(bytes(data), "vault", LIMITS)
        infos = z.zf.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names) or len(z.names) != len(names):
            raise VaultError("this vault file lists a member twice; it may have been tampered with")
        for info in infos:
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > RATIO_FLOOR and ratio > MAX_RATIO:
                raise VaultError(f"{info.filename} in this vault would inflate {ratio:.0f} times "
                                 f"({info.file_size // MB} MB from {info.compress_size:,} bytes; at most "
                                 f"{MAX_RATIO} times is allowed); it looks like a zip bomb. Nothing was imported.")
        return {name: z.read(name) for name in names}
    except ExtractError as exc:
        raise VaultError(f"{exc}. Nothing was imported.") from None
    except MemoryError:
        raise VaultError("this vault is too large to unpack in this browser tab's memory. Nothing was imported.") from None


def _read_meta(members: dict[str, bytes]) -> dict:
    if META not in members:
        raise VaultError(f"this zip has no {META}; it is not a Quire vault")
    try:
        meta = jsonlimits.loads(members[META], META, max_bytes=MAX_META_BYTES)
    except jsonlimits.JSONLimitError as exc:
        raise VaultError(f"{exc}; the vault is damaged. Nothing was imported.") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else None
        raise VaultError(f"this file's format is {got!r}, not {FORMAT!r}; it is not a Quire vault")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise VaultError(f"this vault has no valid format version ({version!r})")
    if version > VERSION:
        raise VaultError(f"this vault was made by a newer Quire (vault format {version}); this version reads "
                         f"formats 1 to {VERSION}. Update Quire, then import it again.")
    return meta


def _verify(members: dict[str, bytes], meta: dict) -> None:
    sums = meta.get("checksums")
    if not isinstance(sums, dict):
        raise VaultError(f"{META} has no checksums; the vault is damaged")
    have = set(members) - {META}
    if set(sums) != have:
        missing, extra = sorted(set(sums) - have), sorted(have - set(sums))
        raise VaultError(f"the vault's contents do not match its list (missing: {', '.join(missing) or 'none'}; "
                         f"unlisted: {', '.join(extra) or 'none'})")
    for name in sorted(have):
        if sha256(members[name]) != sums[name]:
            raise VaultError(f"checksum mismatch for {name}: the vault is damaged or was changed after export")
    if meta["version"] >= 2 and meta.get("checksum") != _meta_checksum(meta):
        raise VaultError(f"the overall checksum in {META} does not match: the vault is damaged or was changed")


def _json_member(members: dict[str, bytes], name: str) -> Any:
    try:
        return jsonlimits.loads(members[name], name)
    except jsonlimits.JSONLimitError as exc:
        raise VaultError(f"{exc}. Nothing was imported.") from None


def _blobs(members: dict[str, bytes]) -> dict[str, bytes]:
    blobs = {}
    for name, data in members.items():
        if name.startswith("blobs/"):
            blobs[_blob_key(name)] = data
    return blobs


def _bucket_name(member: str, prefix: str) -> str:
    name = member[len(prefix):-len(".json")]
    if not _NAME.match(name):
        raise VaultError(f"unexpected member {member} in the vault")
    return name


def _load_v1(members: dict[str, bytes]) -> tuple[dict, dict]:
    """Format 1: ``data/<bucket>.json`` holds a list of ``{"key", "value"}`` records."""
    buckets = {}
    for name in members:
        if name.startswith("data/") and name.endswith(".json"):
            records = _json_member(members, name)
            if not isinstance(records, list) or not all(isinstance(r, dict) and "key" in r for r in records):
                raise VaultError(f"{name} is not a list of {{key, value}} records")
            buckets[_bucket_name(name, "data/")] = records
        elif name != META and not name.startswith("blobs/"):
            raise VaultError(f"unexpected member {name} in a format 1 vault")
    return buckets, _blobs(members)


def _load_v2(members: dict[str, bytes]) -> tuple[dict, dict]:
    buckets = {}
    for name in members:
        if name.startswith("buckets/") and name.endswith(".json"):
            entries = _json_member(members, name)
            if not isinstance(entries, dict):
                raise VaultError(f"{name} is not a JSON object of key -> value")
            buckets[_bucket_name(name, "buckets/")] = entries
        elif name != META and not name.startswith("blobs/"):
            raise VaultError(f"unexpected member {name} in the vault")
    return buckets, _blobs(members)


def _v1_to_v2(buckets: dict, blobs: dict, meta: dict) -> tuple[dict, dict, dict]:
    """Records lists become ``{key: value}`` objects; counts are added."""
    buckets = {name: {str(r["key"]): r.get("value") for r in records} for name, records in buckets.items()}
    return buckets, blobs, {**meta, "version": 2, "counts": _counts(buckets, blobs)}


def _v2_to_v3(buckets: dict, blobs: dict, meta: dict) -> tuple[dict, dict, dict]:
    """Passages key their id ``"chunk_id"``, not ``"id"`` (``quire.passages.upgraded``)."""
    if isinstance(buckets.get("chunks"), dict):
        buckets = {**buckets, "chunks": {sid: passages.upgraded(cs) for sid, cs in buckets["chunks"].items()}}
    return buckets, blobs, {**meta, "version": 3}


LOADERS = {1: _load_v1, 2: _load_v2, 3: _load_v2}  # format 3 is laid out as format 2
MIGRATIONS = {1: _v1_to_v2, 2: _v2_to_v3}  # version n -> n + 1


def unpack(data: bytes) -> tuple[dict[str, dict[str, Any]], dict[str, bytes], dict]:
    """``(buckets, blobs, meta)`` from a vault file, migrated to the current format.

    ``meta["read_version"]`` is the version the file was written in.  Raises
    ``VaultError`` for anything that is not an intact vault this app can read.
    """
    members = _members(data)
    meta = _read_meta(members)
    _verify(members, meta)
    read_version = meta["version"]
    buckets, blobs = LOADERS[read_version](members)
    if read_version >= 2 and meta.get("counts") != _counts(buckets, blobs):
        raise VaultError("the vault's counts do not match its contents; it is damaged")
    while meta["version"] < VERSION:
        buckets, blobs, meta = MIGRATIONS[meta["version"]](buckets, blobs, meta)
    return buckets, blobs, {**meta, "read_version": read_version}


# --- importing -------------------------------------------------------------------

def from_store(snapshot: Mapping[str, Mapping[str, Any]]) -> tuple[dict, dict]:
    """``(buckets, blobs)`` for ``pack`` from a store snapshot (bucket -> {key: value}):
    ``bytes`` values become blobs ``"<bucket>/<key>"``, everything else stays JSON.

    >>> from_store({"originals": {"a.pdf": b"%PDF"}, "sources": {"a.pdf": {"name": "a.pdf"}}})
    ({'originals': {}, 'sources': {'a.pdf': {'name': 'a.pdf'}}}, {'originals/a.pdf': b'%PDF'})
    """
    buckets: dict[str, dict] = {}
    blobs: dict[str, bytes] = {}
    for name, entries in snapshot.items():
        buckets[name] = {}
        for key, value in entries.items():
            if isinstance(value, (bytes, bytearray, memoryview)):
                blobs[f"{name}/{key}"] = bytes(value)
            else:
                buckets[name][key] = value
    return buckets, blobs


def to_store(buckets: Mapping[str, Mapping[str, Any]], blobs: Mapping[str, bytes]) -> dict[str, dict[str, Any]]:
    """The inverse of ``from_store``: bucket -> {key: value}, blobs back in their buckets."""
    out = {name: dict(entries) for name, entries in buckets.items()}
    for key, data in blobs.items():
        bucket, inner = _split_blob_key(key)
        out.setdefault(bucket, {})[inner] = data
    return out


def plan(incoming: Mapping[str, Mapping[str, Any]], current: Mapping[str, Mapping[str, Any] | Iterable[str]],
         mode: str = "merge") -> dict:
    """The writes that bring the current state in line with a vault, for ``store.commit``.

    Both sides are bucket -> ``{key: value}`` (``to_store`` of an unpacked vault;
    ``current`` may give just each bucket's keys, and then every entry is put).
    Entries equal on both sides are left alone.  ``merge`` adds and overwrites
    (the vault wins on the same key) and deletes nothing; ``replace`` also deletes
    every current key the vault lacks, so afterwards the stores equal the vault.

    Returns ``{"mode", "puts": [(bucket, key, value)], "deletes": [(bucket, key)], "summary"}``.
    """
    if mode not in MODES:
        raise VaultError(f"unknown import mode {mode!r}; choose one of: {', '.join(MODES)}")
    puts, deletes, unchanged = [], [], 0
    for name in sorted(set(incoming) | set(current)):
        theirs = incoming.get(name, {})
        ours = current.get(name, ())
        values = ours if isinstance(ours, Mapping) else {}
        for key in sorted(theirs):
            if key in values and _same(values[key], theirs[key]):
                unchanged += 1
            else:
                puts.append((name, key, theirs[key]))
        if mode == "replace":
            deletes += [(name, key) for key in sorted(set(ours) - set(theirs))]
    return {"mode": mode, "puts": puts, "deletes": deletes,
            "summary": {"puts": len(puts), "deletes": len(deletes), "unchanged": unchanged}}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (bytes, bytearray, memoryview)) or isinstance(b, (bytes, bytearray, memoryview)):
        return isinstance(a, (bytes, bytearray, memoryview)) and isinstance(b, (bytes, bytearray, memoryview)) \
            and bytes(a) == bytes(b)
    return a == b
