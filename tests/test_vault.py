"""The vault: one deterministic, checksummed file; bad files are refused before any plan is made."""

import hashlib
import io
import json
import zipfile

import pytest

from quire import vault
from quire.vault import VaultError, from_store, pack, plan, to_store, unpack

CREATED = "2025-03-10T12:00:00Z"
BUCKETS = {
    "settings": {"theme": "dark", "model": {"name": "qwen3:4b", "temperature": 0.2}},
    "chats": {"c1": [{"role": "user", "text": "Was ist BM25? ü"}]},
    "progress": {"e1": {"t": 1, "kind": "chat"}, "e2": {"t": 2, "kind": "export"}},
    "empty": {},
}
BLOBS = {"originals/notes.md": b"# Notes\n", "vectors/nomic-embed-text:latest|ab12": bytes(range(256)) * 4,
         "index/bm25": b""}


def good():
    return pack(BUCKETS, BLOBS, created=CREATED, app_version="0.1.0")


def members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def rezip(members):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def sha(b):
    return hashlib.sha256(b).hexdigest()


# --- packing ---------------------------------------------------------------------

def test_round_trip():
    buckets, blobs, meta = unpack(good())
    assert buckets == BUCKETS and blobs == BLOBS
    assert meta["format"] == "quire-vault" and meta["version"] == vault.VERSION == meta["read_version"]
    assert meta["created"] == CREATED and meta["app_version"] == "0.1.0"
    assert meta["counts"] == {"buckets": {"chats": 1, "empty": 0, "progress": 2, "settings": 2},
                              "blobs": 3, "blob_bytes": 8 + 1024}


def test_layout_and_checksums():
    m = members(good())
    assert list(m)[0] == "vault.json"
    assert sorted(m) == ["blobs/index/bm25", "blobs/originals/notes.md", "blobs/vectors/nomic-embed-text%3Alatest%7Cab12",
                         "buckets/chats.json", "buckets/empty.json", "buckets/progress.json", "buckets/settings.json",
                         "vault.json"]
    meta = json.loads(m["vault.json"])
    assert meta["checksums"] == {n: sha(b) for n, b in m.items() if n != "vault.json"}
    assert meta["checksum"] == sha(vault.canonical({k: v for k, v in meta.items() if k != "checksum"}))


def test_deterministic_whatever_the_insertion_order():
    shuffled = {k: dict(reversed(list(v.items()))) for k, v in reversed(list(BUCKETS.items()))}
    again = pack(shuffled, dict(reversed(list(BLOBS.items()))), created=CREATED, app_version="0.1.0")
    assert again == good()


def test_created_defaults_to_now_and_app_version_to_the_package():
    from datetime import datetime, timezone

    from quire import __version__

    meta = unpack(pack({}, {}))[2]
    assert meta["app_version"] == __version__
    assert abs(datetime.fromisoformat(meta["created"].replace("Z", "+00:00")) - datetime.now(timezone.utc)).seconds < 60


@pytest.mark.parametrize("buckets, blobs, message", [
    ({"bad/name": {}}, {}, "bucket name 'bad/name'"),
    ({"s": {"k": b"bytes"}}, {}, "not plain JSON"),
    ({"s": {"k": float("nan")}}, {}, "not plain JSON"),
    ({"s": {1: "x"}}, {}, "keys must be strings"),
    ({}, {"../escape": b""}, "blob key '../escape'"),
    ({}, {"originals/": b""}, "blob key"),
    ({}, {"no-bucket": b""}, "must be '<bucket>/<key>'"),
    ({}, {"a/b": "text"}, "is str, not bytes"),
])
def test_pack_refuses(buckets, blobs, message):
    with pytest.raises(VaultError, match=message):
        pack(buckets, blobs, created=CREATED)


# --- older formats ------------------------------------------------------------------

def v1_fixture():
    """Format 1, written by hand: buckets as lists of {key, value} under data/, no overall checksum."""
    files = {
        "data/settings.json": json.dumps([{"key": "theme", "value": "light"}, {"key": "lang", "value": "de"}]).encode(),
        "data/chats.json": b"[]",
        "blobs/originals/a.txt": b"hello",
    }
    meta = {"format": "quire-vault", "version": 1, "created": "2024-11-01T08:00:00Z", "app_version": "0.0.9",
            "checksums": {n: sha(b) for n, b in files.items()}}
    return rezip({"vault.json": json.dumps(meta).encode(), **files})


def test_v1_loads_and_is_migrated():
    buckets, blobs, meta = unpack(v1_fixture())
    assert buckets == {"settings": {"theme": "light", "lang": "de"}, "chats": {}}
    assert blobs == {"originals/a.txt": b"hello"}
    assert (meta["version"], meta["read_version"], meta["app_version"]) == (vault.VERSION, 1, "0.0.9")
    assert meta["counts"] == {"buckets": {"chats": 0, "settings": 2}, "blobs": 1, "blob_bytes": 5}


def test_v2_passages_are_migrated_to_chunk_id():
    """Format 2 keyed a passage's id "id"; format 3 keys it "chunk_id", the key every hit and
    citation uses.  Other buckets' "id" keys (sources, study sets) are not passages and stay."""
    buckets = {"chunks": {"s1": [{"id": "s1:0", "n": 0, "text": "a"}, {"id": "s1:1", "n": 1, "text": "b"}]},
               "sources": {"s1": {"id": "s1", "name": "a.md"}}, "study": {"d": {"id": "d", "items": []}}}
    m = members(pack(buckets, {}, created=CREATED))
    with_meta(version=2)(m)
    got, _, meta = unpack(rezip(m))
    assert (meta["version"], meta["read_version"]) == (3, 2)
    assert got["chunks"] == {"s1": [{"chunk_id": "s1:0", "n": 0, "text": "a"}, {"chunk_id": "s1:1", "n": 1, "text": "b"}]}
    assert got["sources"] == buckets["sources"] and got["study"] == buckets["study"]


def test_v2_counts_are_still_checked():
    m = members(pack({"settings": {"a": 1}}, {}, created=CREATED))
    with_meta(version=2, counts={"buckets": {}, "blobs": 0, "blob_bytes": 0})(m)
    with pytest.raises(VaultError, match="counts"):
        unpack(rezip(m))


def test_every_old_version_has_a_loader_and_a_migration():
    assert sorted(vault.LOADERS) == list(range(1, vault.VERSION + 1))
    assert sorted(vault.MIGRATIONS) == list(range(1, vault.VERSION))


# --- refusing bad files ----------------------------------------------------------------

def tampered(change):
    m = members(good())
    change(m)
    return rezip(m)


def with_meta(**fields):
    def change(m):
        meta = {**json.loads(m["vault.json"]), **fields}
        meta["checksum"] = vault._meta_checksum(meta)
        m["vault.json"] = json.dumps(meta).encode()
    return change


def flip_last_byte_of_content(data):
    """Corrupt compressed bytes in the middle of the file (CRC or inflate fails)."""
    b = bytearray(data)
    i = b.index(b"buckets/progress.json") + len("buckets/progress.json") + 5
    b[i] ^= 0xFF
    return bytes(b)


BAD = [
    ("not bytes", lambda: "a string", "a vault is bytes, not str"),
    ("empty", lambda: b"", "damaged or incomplete"),
    ("garbage", lambda: b"PK\x03\x04 nope", "damaged or incomplete"),
    ("truncated half", lambda: good()[: len(good()) // 2], "damaged or incomplete"),
    ("truncated tail", lambda: good()[:-10], "damaged or incomplete"),
    ("corrupt bytes", lambda: flip_last_byte_of_content(good()), "damaged"),
    ("no vault.json", lambda: tampered(lambda m: m.pop("vault.json")), "no vault.json"),
    ("vault.json not json", lambda: tampered(lambda m: m.update({"vault.json": b"{"})), "not valid JSON"),
    ("other format", lambda: tampered(with_meta(format="anki")), "format is 'anki', not 'quire-vault'"),
    ("future version", lambda: tampered(with_meta(version=4)), "newer Quire \\(vault format 4\\).*formats 1 to 3"),
    ("version zero", lambda: tampered(with_meta(version=0)), "no valid format version"),
    ("version as text", lambda: tampered(with_meta(version="2")), "no valid format version"),
    ("member changed", lambda: tampered(lambda m: m.update({"buckets/settings.json": b'{"theme":"pink"}'})),
     "checksum mismatch for buckets/settings.json"),
    ("blob changed", lambda: tampered(lambda m: m.update({"blobs/originals/notes.md": b"# Notes!\n"})),
     "checksum mismatch for blobs/originals/notes.md"),
    ("member missing", lambda: tampered(lambda m: m.pop("blobs/index/bm25")), "missing: blobs/index/bm25"),
    ("member added", lambda: tampered(lambda m: m.update({"blobs/x/extra": b"x"})), "unlisted: blobs/x/extra"),
    ("overall checksum", lambda: tampered(lambda m: m.update(
        {"vault.json": m["vault.json"].replace(b'"created":"2025', b'"created":"2026')})), "overall checksum"),
    ("counts lie", lambda: tampered(with_meta(counts={"buckets": {}, "blobs": 0, "blob_bytes": 0})), "counts"),
    ("no checksums", lambda: tampered(with_meta(checksums=None)), "has no checksums"),
]


@pytest.mark.parametrize("make, message", [(m, msg) for _, m, msg in BAD], ids=[b[0] for b in BAD])
def test_bad_files_are_refused(make, message):
    # The import unpacks before it plans anything: tests/test_vault_service.py checks that a
    # refused file leaves the store as it was.
    with pytest.raises(VaultError, match=message):
        unpack(make())


@pytest.mark.parametrize("member", ["buckets/../evil.json", "blobs/../../etc/passwd", "blobs/originals/a%2",
                                    "blobs/originals/a/b", "blobs/x", "notes.txt"])
def test_unexpected_member_names_are_refused(member):
    files = {member: b"{}"}
    meta = {"format": "quire-vault", "version": 2, "created": CREATED, "app_version": "x",
            "counts": {"buckets": {}, "blobs": 0, "blob_bytes": 0}, "checksums": {n: sha(b) for n, b in files.items()}}
    meta["checksum"] = vault._meta_checksum(meta)
    with pytest.raises(VaultError, match="unexpected member|must be '<bucket>/<key>'"):
        unpack(rezip({"vault.json": json.dumps(meta).encode(), **files}))


# --- store snapshots and import plans -----------------------------------------------------

def test_store_snapshot_round_trip():
    snapshot = {"originals": {"notes.md": b"# Notes\n"}, "sources": {"notes.md": {"name": "notes.md"}},
                "vectors": {"m:1|h": b"\x00\x01"}}
    data = pack(*from_store(snapshot), created=CREATED)
    assert to_store(*unpack(data)[:2]) == snapshot


CURRENT = {"settings": {"theme": "light", "font": "big"}, "chats": {"c1": [{"role": "user", "text": "Was ist BM25? ü"}]},
           "sources": {"s9": {"title": "old"}},
           "originals": {"notes.md": b"# Notes\n", "old.pdf": b"%PDF"}}
INCOMING = to_store(BUCKETS, BLOBS)
PUTS = [("index", "bm25"), ("progress", "e1"), ("progress", "e2"), ("settings", "model"), ("settings", "theme"),
        ("vectors", "nomic-embed-text:latest|ab12")]


@pytest.mark.parametrize("mode, deletes", [
    ("merge", []),
    ("replace", [("originals", "old.pdf"), ("settings", "font"), ("sources", "s9")]),
])
def test_plan(mode, deletes):
    got = plan(INCOMING, CURRENT, mode)
    assert [p[:2] for p in got["puts"]] == PUTS  # chats/c1 and originals/notes.md are identical
    assert got["deletes"] == deletes
    assert got["summary"] == {"puts": 6, "deletes": len(deletes), "unchanged": 2}


def test_plan_with_only_keys_puts_everything():
    got = plan(INCOMING, {"settings": ["theme", "font"], "originals": ["notes.md"]}, "replace")
    assert len(got["puts"]) == 8 and got["deletes"] == [("settings", "font")]


def test_bytes_and_text_are_never_equal():
    assert plan({"b": {"k": b"x"}}, {"b": {"k": "x"}})["puts"] == [("b", "k", b"x")]


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_applying_the_plan(mode):
    state = {b: dict(v) for b, v in CURRENT.items()}
    p = plan(INCOMING, state, mode)
    for bucket, key in p["deletes"]:
        del state[bucket][key]
    for bucket, key, value in p["puts"]:
        state.setdefault(bucket, {})[key] = value
    nonempty = {b: v for b, v in state.items() if v}
    if mode == "replace":
        assert nonempty == {b: v for b, v in INCOMING.items() if v}
    else:
        assert nonempty == {b: {**CURRENT.get(b, {}), **v} for b, v in INCOMING.items() if v or b in CURRENT} | {
            "sources": CURRENT["sources"]}


def test_plan_of_a_v1_vault():
    buckets, blobs, meta = unpack(v1_fixture())
    got = plan(to_store(buckets, blobs), current={"settings": {"theme": "dark"}}, mode="merge")
    assert meta["read_version"] == 1
    assert got["puts"] == [("originals", "a.txt", b"hello"), ("settings", "lang", "de"), ("settings", "theme", "light")]
    assert got["deletes"] == []


def test_unknown_mode_lists_the_modes():
    with pytest.raises(VaultError, match="unknown import mode 'overwrite'; choose one of: merge, replace"):
        plan(to_store(*unpack(good())[:2]), {}, mode="overwrite")
