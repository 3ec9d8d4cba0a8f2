"""The privacy panel's rows: what, how big, where."""

import pytest

from quire.privacy import BUCKETS, human_size, inventory, total

STATS = {
    "originals": {"count": 3, "bytes": 2_500_000},
    "chunks": {"count": 420, "bytes": 900_000},
    "vectors": {"count": 420, "bytes": 420 * 384 * 4},
    "chats": {"count": 12, "bytes": 40_000},
    "study_items": {"count": 80, "bytes": 60_000},
    "progress": {"count": 900, "bytes": 90_000},
    "settings": {"count": 6, "bytes": 512},
    "prompt_overrides": {"count": 1, "bytes": 2048},
}


def test_every_bucket_has_a_row_in_order():
    rows = inventory(STATS)
    assert [r["bucket"] for r in rows] == ["originals", "chunks", "vectors", "chats", "study_items", "progress",
                                           "settings", "prompt_overrides"]
    assert all(r["what"] and r["holds"] and r["where"].startswith("quire.library / ") for r in rows)


def test_every_place_named_is_a_store_bucket():
    from quire.store import BUCKETS as STORES

    named = {s.strip() for row in BUCKETS.values() for s in row[1].split(" / ")[1].split(",")}
    assert named <= set(STORES)


@pytest.mark.parametrize("bucket, what, size, where", [
    ("originals", "Original files", "2.4 MB", "quire.library / originals, sources"),
    ("chunks", "Text passages", "878.9 KB", "quire.library / chunks, index, ocr"),
    ("vectors", "Search vectors", "630.0 KB", "quire.library / vectors"),
    ("chats", "Conversations", "39.1 KB", "quire.library / chats"),
    ("study_items", "Study material", "58.6 KB", "quire.library / study"),
    ("progress", "Progress", "87.9 KB", "quire.library / progress"),
    ("settings", "Settings", "512 B", "quire.library / settings"),
    ("prompt_overrides", "Prompt overrides", "2.0 KB", "quire.library / settings"),
])
def test_rows(bucket, what, size, where):
    row = {r["bucket"]: r for r in inventory(STATS)}[bucket]
    assert (row["what"], row["size"], row["where"], row["count"]) == (what, size, where, STATS[bucket]["count"])


def test_missing_buckets_show_empty():
    rows = inventory({})
    assert len(rows) == len(BUCKETS) and all((r["count"], r["bytes"], r["size"]) == (0, 0, "0 B") for r in rows)


@pytest.mark.parametrize("stats, message", [
    ({"cookies": {"count": 1}}, "unknown bucket 'cookies'; choose one of: originals, chunks"),
    ({"chats": {"count": -1, "bytes": 0}}, "cannot be negative"),
])
def test_refuses(stats, message):
    with pytest.raises(ValueError, match=message):
        inventory(stats)


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KB"), (1024 ** 2, "1.0 MB"),
                                     (3 * 1024 ** 3, "3.0 GB"), (5 * 1024 ** 4, "5120.0 GB")])
def test_human_size(n, text):
    assert human_size(n) == text


def test_total():
    assert total(inventory(STATS)) == {"count": 1842, "bytes": sum(s["bytes"] for s in STATS.values()),
                                       "size": human_size(sum(s["bytes"] for s in STATS.values()))}
