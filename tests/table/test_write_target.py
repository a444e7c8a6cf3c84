"""The seam between the table layer and the Spark layer: Spark's Iceberg writes get a small
``WriteTarget`` (metadata, io, spark, branch, commit), and the format layer's ``BaseTable`` holds
no Spark session; the snapshot summary names the Spark application through the target's commit."""
import inspect

import icefloe
from icefloe.iceberg.table import BaseTable
from icefloe.spark.target import WriteTarget


def test_the_format_layer_table_holds_no_spark_session(tmp_path, spark):
    assert "spark" not in inspect.signature(BaseTable.__init__).parameters
    t = icefloe.Catalog(str(tmp_path / "w"), spark=spark).create_table("db.t", "id bigint")
    plain = BaseTable("db.t", t.ops)
    assert not hasattr(plain, "_spark") and not hasattr(plain, "spark")
    target = t.write_target()
    assert isinstance(target, WriteTarget) and target.branch == "main"
    assert t.writing_to("audit").write_target().branch == "audit"


def test_row_level_changes_name_the_spark_application_and_write_the_table_branch(tmp_path, spark):
    t = icefloe.Catalog(str(tmp_path / "w"), spark=spark).create_table("db.t", "id bigint, v string")
    t.append(spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id bigint, v string"))
    assert t.delete("id = 1")["deleted"] == 1
    summary = t.refresh().current_snapshot().summary
    assert summary["spark.app.id"] == spark.sparkContext.applicationId and summary["engine-name"] == "spark"
    # equality deletes go to the branch this table object writes, not to main
    main_head = t.current_snapshot().snapshot_id
    branch = t.writing_to("dev")
    snap = branch.delete_by_key(spark.createDataFrame([(2,)], "id bigint"))
    assert t.refresh().current_snapshot().snapshot_id == main_head
    assert t.refs()["dev"].snapshot_id == snap.snapshot_id
    assert sorted(r.id for r in t.to_spark(ref="dev").collect()) == [3]
    assert sorted(r.id for r in t.to_spark().collect()) == [2, 3]
