"""Iceberg's spark-procedures page, ``remove_orphan_files``: the path-equivalence arguments
(``equal_schemes``, ``equal_authorities``, ``prefix_mismatch_mode``). A listed file whose path
the metadata names under another scheme or authority is a prefix mismatch: refused by default,
kept with IGNORE, deleted with DELETE; the equivalences make the two prefixes the same."""
import dataclasses
import os
import shutil

import pytest

from icefloe.iceberg.orphan_paths import PathEquivalence, find_orphans
from icefloe.sql.errors import SqlError

LATER = "TIMESTAMP '2999-01-01 00:00:00'"


def _table_with_foreign_prefix(catalog, name: str, prefix: str):
    """A table whose metadata names one of its files ``<prefix><path>`` (the file is at ``<path>``),
    plus a true orphan; returns (table, the file's path, the orphan's path)."""
    run = catalog.sql
    run(f"CREATE TABLE {name} (id bigint) USING iceberg")
    run(f"INSERT INTO {name} VALUES (1)")
    t = catalog.load_table(name)
    first = next(iter(t.plan_files()))
    path = os.path.join(os.path.realpath(t.location), "data", "copied.parquet")
    shutil.copy(first.file_path.removeprefix("file:"), path)
    t.commit_existing_files([dataclasses.replace(first, file_path=prefix + path)])
    orphan = os.path.join(os.path.realpath(t.location), "data", "stray.parquet")
    with open(orphan, "wb") as fh:
        fh.write(b"not referenced")
    return t, path, orphan


def _call(catalog, name: str, args: str = "") -> list:
    out = catalog.sql(f"CALL system.remove_orphan_files(table => '{name}', older_than => {LATER}{args})").collect()
    return sorted(r[0] for r in out)


def test_equal_schemes_and_prefix_mismatch_mode(catalog):
    t, path, orphan = _table_with_foreign_prefix(catalog, "db.orph_scheme", "file1:")
    # by default a listed file whose path the metadata names under another scheme refuses the
    # whole call, naming the pair, and deletes nothing (not even the true orphan)
    with pytest.raises(SqlError, match=r"\(file1, file\).*equal_schemes.*nothing was deleted"):
        _call(catalog, "db.orph_scheme")
    assert os.path.exists(path) and os.path.exists(orphan)
    # the schemes declared equal: only the true orphan goes
    assert _call(catalog, "db.orph_scheme", ", equal_schemes => map('file1', 'file'), dry_run => true") == [orphan]
    # IGNORE keeps the mismatched file; DELETE deletes it (and the orphan)
    assert _call(catalog, "db.orph_scheme", ", prefix_mismatch_mode => 'IGNORE', dry_run => true") == [orphan]
    assert _call(catalog, "db.orph_scheme", ", prefix_mismatch_mode => 'delete'") == sorted([orphan, path])
    assert not os.path.exists(path) and not os.path.exists(orphan)
    with pytest.raises(SqlError, match="prefix_mismatch_mode must be one of ERROR, IGNORE, DELETE, got 'NONE'"):
        _call(catalog, "db.orph_scheme", ", prefix_mismatch_mode => 'NONE'")


def test_equal_authorities(catalog):
    t, path, orphan = _table_with_foreign_prefix(catalog, "db.orph_auth", "file1://localhost")
    assert f"file1://localhost{path}" in [f.file_path for f in t.refresh().plan_files()]
    schemes = ", equal_schemes => map('file1', 'file')"
    with pytest.raises(SqlError, match=r"\(localhost, None\)"):
        _call(catalog, "db.orph_auth", schemes + ", dry_run => true")
    # an authority mapped to '' matches any (the listing gives local files none)
    assert _call(catalog, "db.orph_auth", schemes + ", equal_authorities => map('localhost', ''), dry_run => true") \
        == [orphan]
    # keys may list several names, as Iceberg's do
    assert _call(catalog, "db.orph_auth",
                 schemes + ", equal_authorities => map('host-a,localhost', ''), dry_run => true") == [orphan]
    assert os.path.exists(path)


def test_s3a_and_s3n_are_s3_by_default():
    eq = PathEquivalence()
    referenced = {"s3a://bucket/t/data/a.parquet", "s3n://bucket/t/data/b.parquet"}
    listed = ["s3://bucket/t/data/a.parquet", "s3://bucket/t/data/b.parquet", "s3://bucket/t/data/c.parquet"]
    assert find_orphans(listed, referenced, eq) == ["s3://bucket/t/data/c.parquet"]
    # another bucket at the same path is a mismatch; refused unless told what to do
    with pytest.raises(ValueError, match=r"\(other, bucket\)"):
        find_orphans(["s3://bucket/t/data/x.parquet"], {"s3://other/t/data/x.parquet"}, eq)
    assert find_orphans(["s3://bucket/t/data/x.parquet"], {"s3://other/t/data/x.parquet"},
                        PathEquivalence.of(equal_authorities={"other": "bucket"})) == []
    assert find_orphans(["s3://bucket/t/data/x.parquet"], {"s3://other/t/data/x.parquet"},
                        PathEquivalence.of(prefix_mismatch_mode="delete")) == ["s3://bucket/t/data/x.parquet"]
    # a referenced location without scheme or authority matches any
    assert find_orphans(["s3://bucket/t/data/y.parquet"], {"/t/data/y.parquet"}, eq) == []
