"""icefloe's Arrow writers dictionary-encode a column only where its values repeat: a column of
distinct values (keys, sequence numbers, measurements) is written plain, as Parquet's Java writer
writes it, rather than as a dictionary abandoned part-way with its pages kept."""
import io

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe import Catalog
from icefloe.core.arrow import dictionary_columns


def _encodings(path_or_buffer) -> dict:
    md = pq.read_metadata(path_or_buffer)
    rg = md.row_group(0)
    return {rg.column(i).path_in_schema: set(rg.column(i).encodings) for i in range(rg.num_columns)}


def test_distinct_columns_are_plain_and_repeating_ones_and_nested_leaves_keep_the_dictionary():
    n = 5000
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "kind": pa.array([f"k{i % 7}" for i in range(n)]),
        "half": pa.array([i // 2 for i in range(n)], pa.int64()),           # exactly half distinct
        "point": pa.array([{"x": i, "tag": "a"} for i in range(n)]),
        "tags": pa.array([["a", "b"]] * n),
        "attrs": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "empty": pa.array([None] * n, pa.string()),
    })
    cols = dictionary_columns(table)
    assert cols == ["kind", "half", "point.x", "point.tag", "tags.list.element", "attrs.key_value.key",
                    "attrs.key_value.value", "empty"]
    buf = io.BytesIO()
    pq.write_table(table, buf, use_dictionary=cols)
    enc = _encodings(pa.BufferReader(buf.getvalue()))
    assert "RLE_DICTIONARY" not in enc["id"]
    assert all("RLE_DICTIONARY" in enc[c] for c in cols if c != "empty"), enc
    # no rows to judge by: every column keeps Arrow's default
    assert dictionary_columns(table.slice(0, 0))[:3] == ["id", "kind", "half"]


def test_both_formats_arrow_writers_write_keys_plain(tmp_path):
    data = pa.table({"id": pa.array(range(3000), pa.int64()), "s": [f"n{i % 10}" for i in range(3000)]})
    ice = Catalog(str(tmp_path / "ice")).create_table("db.t", "id bigint not null, s string")
    ice.append(data)
    pai = Catalog(str(tmp_path / "pai"), "paimon").create_table(
        "db.t", "id bigint not null, s string", properties={"primary-key": "id", "bucket": "1"})
    pai.append(data)
    for t in (ice, pai):
        (path,) = [f.file_path for f in t.plan_files()]
        assert pq.read_metadata(path).created_by.startswith("parquet-cpp-arrow")
        enc = _encodings(path)
        assert "RLE_DICTIONARY" not in enc["id"] and "RLE_DICTIONARY" in enc["s"], (t, enc)
        if t is pai:        # Paimon's key copy and sequence numbers are distinct per row too
            assert "RLE_DICTIONARY" not in enc["_KEY_id"] and "RLE_DICTIONARY" not in enc["_SEQUENCE_NUMBER"]
