"""What a pyiceberg user reaches for: catalogs by name from ``.icefloe.yaml`` and
``ICEFLOE_CATALOG__*`` (``icefloe.load_catalog``, the CLI's ``--catalog``), and
``t.scan(row_filter=..., selected_fields=...)`` run as Arrow, pandas or Spark."""
import pyarrow as pa
import pytest
from click.testing import CliRunner

import icefloe
from icefloe.cli import cli
from icefloe.config import ConfigError


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ICEFLOE_CONFIG", raising=False)
    for k in [k for k in __import__("os").environ if k.startswith("ICEFLOE_CATALOG__")]:
        monkeypatch.delenv(k)
    (tmp_path / ".icefloe.yaml").write_text(
        f"catalog:\n  default:\n    warehouse: {tmp_path / 'ice'}\n"
        f"  logs:\n    warehouse: {tmp_path / 'pai'}\n    format: paimon\n")
    return tmp_path


def test_catalogs_by_name_from_the_file_and_the_environment(config, monkeypatch, spark):
    default = icefloe.load_catalog(spark=spark)
    assert (default.warehouse, default.format) == (str(config / "ice"), "iceberg")
    logs = icefloe.load_catalog("logs", spark=spark)
    assert (logs.warehouse, logs.format) == (str(config / "pai"), "paimon")
    monkeypatch.setenv("ICEFLOE_CATALOG__LOGS__WAREHOUSE", str(config / "other"))
    assert icefloe.load_catalog("logs", spark=spark).warehouse == str(config / "other")
    monkeypatch.setenv("ICEFLOE_CATALOG__ENVONLY__WAREHOUSE", str(config / "env"))
    assert icefloe.load_catalog("envonly", spark=spark).warehouse == str(config / "env")
    with pytest.raises(ConfigError, match="catalog 'nope' has no warehouse.*ICEFLOE_CATALOG__NOPE__WAREHOUSE"):
        icefloe.load_catalog("nope")
    monkeypatch.setenv("ICEFLOE_CATALOG__DEFAULT__FLAVOR", "x")
    with pytest.raises(ConfigError, match="unknown setting.*flavor"):
        icefloe.load_catalog()


def test_the_cli_opens_a_configured_catalog(config, spark):
    t = icefloe.load_catalog("logs", spark=spark).create_table("db.l", "id bigint, s string")
    t.append(pa.table({"id": pa.array([1], pa.int64()), "s": ["a"]}))
    res = CliRunner().invoke(cli, ["--catalog", "logs", "tables"])
    assert res.exit_code == 0 and any("db.l" in line or line.split() == ["db", "l"]
                                      for line in res.output.splitlines()), res.output
    res = CliRunner().invoke(cli, ["--catalog", "logs", "snapshots", "db.l"])
    assert res.exit_code == 0 and "APPEND" in res.output.upper(), res.output
    res = CliRunner().invoke(cli, ["--catalog", "nope", "tables"])
    assert res.exit_code == 2 and "has no warehouse" in res.output


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_scan(tmp_path, spark, fmt):
    t = icefloe.Catalog(str(tmp_path / "w"), format=fmt, spark=spark).create_table(
        "db.t", "id bigint not null, name string, score double")
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]}))
    scan = t.scan(row_filter="id >= 2", selected_fields=["name", "id"])
    assert scan.to_arrow().column_names == ["name", "id"]
    assert sorted(scan.to_arrow().column("id").to_pylist()) == [2, 3]
    assert sorted(scan.to_pandas()["name"]) == ["b", "c"]
    assert sorted(r.id for r in scan.to_spark().collect()) == [2, 3] and scan.to_spark().columns == ["name", "id"]
    assert len(scan.plan_files()) == 1 and scan.count() == 2
    assert t.scan().to_arrow().num_rows == 3
    with pytest.raises(ValueError, match="not columns of db.t"):
        t.scan(selected_fields=["nope"])
