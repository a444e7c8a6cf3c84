"""The Hadoop (directory) catalog reads a metadata version or the version hint only when it is a
regular file under the size limit, the rule register and the SQL catalog follow: a FIFO or a
huge file planted in a table's ``metadata/`` directory never blocks or exhausts a reader."""
import os
import threading

import pytest

import icefloe
from icefloe.errors import LocationError
from icefloe.iceberg.locations import MAX_METADATA_BYTES


@pytest.fixture
def table_dir(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    cat.create_table("db.t", "id bigint")
    yield cat, tmp_path / "wh" / "db" / "t" / "metadata"


def _within(seconds, fn):
    """``fn()``'s result or exception, or a failure when it has not returned after ``seconds``."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out["error"] = e

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    return th.is_alive(), out


def _unblock(fifo):
    try:  # a reader blocked on the FIFO (the old behaviour) gets EOF once a writer opens and closes it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_fifo_as_metadata_version_is_refused_without_blocking(table_dir):
    cat, meta = table_dir
    fifo = meta / "v2.metadata.json"
    os.mkfifo(fifo)
    try:
        blocked, out = _within(10, lambda: cat.load_table("db.t"))
    finally:
        _unblock(fifo)
    assert not blocked, "loading the table blocked on a FIFO planted as a metadata version"
    assert isinstance(out.get("error"), LocationError), out
    assert "not a regular file" in str(out["error"]) and "v2.metadata.json" in str(out["error"])


def test_huge_metadata_version_is_refused_before_reading(table_dir):
    cat, meta = table_dir
    with open(meta / "v2.metadata.json", "wb") as f:
        f.truncate(MAX_METADATA_BYTES + 1)        # sparse: no disk used, but larger than the limit
    with pytest.raises(LocationError, match="larger than the limit"):
        cat.load_table("db.t")


def test_fifo_as_version_hint_is_ignored_like_a_garbage_hint(table_dir):
    cat, meta = table_dir
    hint = meta / "version-hint.text"
    hint.unlink()
    os.mkfifo(hint)
    try:
        blocked, out = _within(10, lambda: [f.name for f in cat.load_table("db.t").schema.fields])
    finally:
        _unblock(hint)
    assert not blocked, "loading the table blocked on a FIFO planted as the version hint"
    assert out.get("value") == ["id"], out
