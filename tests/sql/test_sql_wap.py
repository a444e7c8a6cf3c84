"""Write-audit-publish (Iceberg's branching and spark-writes pages, spark-procedures'
cherrypick_snapshot / publish_changes / fast_forward): ``spark.wap.branch`` sends writes to the
audit branch, ``spark.wap.id`` stages them, and the procedures publish them."""
import json

import pytest

from icefloe.sql.errors import SqlError


def _meta(t) -> dict:
    """The table's current metadata file, as written."""
    return json.loads(t.io.read_bytes(t.refresh().metadata_location))


def _rows(run, q):
    return sorted(tuple(r) for r in run(q).collect())


@pytest.fixture
def run(catalog):
    yield catalog.sql
    catalog.sql("RESET spark.wap.branch")
    catalog.sql("RESET spark.wap.id")


def test_wap_branch_takes_the_writes_and_fast_forward_publishes_them(catalog, run):
    run("CREATE TABLE db.w (id bigint, data string) USING iceberg TBLPROPERTIES ('write.wap.enabled'='true')")
    run("CREATE TABLE db.plain (id bigint) USING iceberg")
    run("INSERT INTO db.w VALUES (1, 'a'), (2, 'b')")
    t = catalog.load_table("db.w")
    main_head = _meta(t)["refs"]["main"]["snapshot-id"]

    run("SET spark.wap.branch = audit")
    # a table without write.wap.enabled is not written (Iceberg's runtime would write main)
    with pytest.raises(SqlError, match="does not enable write-audit-publish"):
        run("INSERT INTO db.plain VALUES (1)")
    assert catalog.load_table("db.plain").current_snapshot() is None
    run("INSERT INTO db.w VALUES (3, 'c')")
    run("DELETE FROM db.w WHERE id = 1")
    run("UPDATE db.w SET data = 'B' WHERE id = 2")
    run("MERGE INTO db.w t USING (SELECT 4 AS id, 'd' AS data) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    meta = _meta(t)
    assert meta["refs"]["main"]["snapshot-id"] == main_head == meta["current-snapshot-id"]
    audit = meta["refs"]["audit"]["snapshot-id"]
    assert [s["summary"]["operation"] for s in meta["snapshots"]][1:] == ["append", "delete", "overwrite",
                                                                          "overwrite"]
    # reads see the audit branch while it is set (the audit step); main is untouched
    assert _rows(run, "SELECT * FROM db.w") == [(2, "B"), (3, "c"), (4, "d")]
    assert _rows(run, "SELECT * FROM db.w VERSION AS OF 'main'") == [(1, "a"), (2, "b")]
    run("SET spark.wap.id = w1")
    with pytest.raises(SqlError, match=r"Cannot set both WAP ID and branch, but got ID \[w1\] and branch \[audit\]"):
        run("INSERT INTO db.w VALUES (5, 'e')")
    run("RESET spark.wap.id")
    run("ALTER TABLE db.w CREATE BRANCH other")
    with pytest.raises(SqlError, match=r"Cannot write to both branch and WAP branch"):
        run("INSERT INTO db.w.branch_other VALUES (5, 'e')")
    # the documentation's SET without ';' before the next statement is refused, not a branch name
    with pytest.raises(SqlError, match="more than one word"):
        run("SET spark.wap.branch = audit-branch\nINSERT INTO db.w VALUES (5, 'e')")
    run("RESET spark.wap.branch")
    assert _rows(run, "SELECT * FROM db.w") == [(1, "a"), (2, "b")]
    assert _meta(t)["refs"]["audit"]["snapshot-id"] == audit

    out = [tuple(r) for r in run("CALL system.fast_forward('db.w', 'main', 'audit')").collect()]
    assert out == [("main", main_head, audit)]
    meta = _meta(t)
    assert meta["current-snapshot-id"] == audit and meta["refs"]["main"]["snapshot-id"] == audit
    assert _rows(run, "SELECT * FROM db.w") == [(2, "B"), (3, "c"), (4, "d")]


def test_wap_id_stages_and_publish_changes_or_cherrypick_publish(catalog, run):
    run("CREATE TABLE db.s (id bigint) USING iceberg TBLPROPERTIES ('write.wap.enabled'='true')")
    run("INSERT INTO db.s VALUES (1)")
    t = catalog.load_table("db.s")
    head = _meta(t)["current-snapshot-id"]

    run("SET spark.wap.id = w1")
    run("INSERT INTO db.s VALUES (2)")
    meta = _meta(t)
    staged = meta["snapshots"][-1]
    assert staged["summary"]["wap.id"] == "w1" and staged["parent-snapshot-id"] == head
    assert meta["current-snapshot-id"] == head and meta["refs"] == {"main": meta["refs"]["main"]}
    assert meta["refs"]["main"]["snapshot-id"] == head
    assert _rows(run, "SELECT * FROM db.s") == [(1,)]           # staged: not visible
    run("SET spark.wap.id = w2")
    run("INSERT INTO db.s VALUES (3)")
    run("RESET spark.wap.id")
    w2 = _meta(t)["snapshots"][-1]["snapshot-id"]

    # w1's parent is main's head: publishing fast-forwards main to the staged snapshot itself
    out = [tuple(r) for r in run("CALL system.publish_changes('db.s', 'w1')").collect()]
    assert out == [(staged["snapshot-id"], staged["snapshot-id"])]
    assert _rows(run, "SELECT * FROM db.s") == [(1,), (2,)]
    # w2 was staged on the old head: picking it is a new append naming its source and wap id
    out = [tuple(r) for r in run(f"CALL system.cherrypick_snapshot('db.s', {w2})").collect()]
    meta = _meta(t)
    picked = meta["snapshots"][-1]
    assert out == [(w2, picked["snapshot-id"])] and meta["current-snapshot-id"] == picked["snapshot-id"]
    assert picked["summary"]["source-snapshot-id"] == str(w2)
    assert picked["summary"]["published-wap-id"] == "w2"
    assert picked["parent-snapshot-id"] == staged["snapshot-id"]
    assert _rows(run, "SELECT * FROM db.s") == [(1,), (2,), (3,)]
    with pytest.raises(SqlError, match="publish_changes"):
        run("CALL system.publish_changes('db.s', 'w2')")
    with pytest.raises(SqlError, match="no snapshot staged"):
        run("CALL system.publish_changes('db.s', 'nope')")
    assert _rows(run, "SELECT * FROM db.s") == [(1,), (2,), (3,)]
