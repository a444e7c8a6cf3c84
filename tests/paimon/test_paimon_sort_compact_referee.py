"""Apache Paimon 1.4's Java engine (``paimon-bundle``, ``tools/paimon_java.py``) reads what icefloe's
``CALL sys.compact(..., order_strategy, order_by)`` and ``compact_manifest(manifest_sort_enabled)``
write: the same rows, snapshots and files, and it writes and compacts on after them (long: one JVM
round after each)."""
from __future__ import annotations

import pytest

from icefloe.catalog import Catalog
from tests.paimon_referee import APPEND, BundleSide, arrow, ice_files, ice_rows, ice_snapshots


@pytest.mark.long
def test_paimon_java_reads_sort_compactions_and_sorted_manifests(paimon_bundle, paimon_spark):
    pj, java = paimon_bundle, BundleSide(paimon_bundle)
    ice = Catalog(paimon_bundle.warehouse, "paimon", paimon_spark)
    t = ice.create_table("db.sorted", "id bigint not null, v string, dt string", partitioned_by=["dt"],
                         properties={"bucket": "-1"})
    model: dict[int, tuple] = {}
    for i in range(3):
        rows = [((i * 7 + j * 5) % 40, f"v{(j * 3 + i) % 5}", "x" if j % 2 else "y") for j in range(8)]
        rows = list({r[0]: r for r in rows}.values())
        rows = [r for r in rows if r[0] not in model]
        t.append(arrow(APPEND, rows))
        model.update({r[0]: r for r in rows})
    want = sorted(model.values(), key=repr)
    for strategy, partitions in (("zorder", "dt=x"), ("hilbert", "dt=y"), ("order", "")):
        ice.sql(f"CALL sys.compact(table => 'db.sorted', partitions => '{partitions}', "
                f"order_strategy => '{strategy}', order_by => 'id,v')")
        assert ice_snapshots(t)[-1][1] == "OVERWRITE", strategy
        assert java.rows("sorted") == want == ice_rows(t, ["id", "v", "dt"]), strategy
        assert java.snapshots("sorted") == ice_snapshots(t)
        assert java.files("sorted") == ice_files(t)
    ice.sql("CALL sys.compact_manifest(`table` => 'db.sorted', manifest_sort_enabled => true)")
    assert ice_snapshots(t)[-1][1] == "COMPACT"
    assert java.rows("sorted") == want and java.files("sorted") == ice_files(t)
    # Paimon Java writes on and compacts; icefloe reads that
    pj.write("db.sorted", [(100, "j", "x")])
    model[100] = (100, "j", "x")
    pj.compact("db.sorted", options={"compaction.min.file-num": "2"})
    assert ice_rows(t, ["id", "v", "dt"]) == sorted(model.values(), key=repr) == java.rows("sorted")
    assert t.check().ok
