"""Warehouses on Google Cloud Storage (``gs://``: fake-gcs-server behind tools/gcs_server.py's XML
API adapter) and Azure Blob Storage (``az://``, ``abfs://``: Azurite), both on the loopback
address: Iceberg and Paimon tables written by Spark, changed row by row and read back; the
conditional create that is both formats' commit point has exactly one winner; a missing bucket or
container, a wrong endpoint and missing credentials are named, and secrets appear nowhere."""
import threading
from dataclasses import replace

import pyarrow as pa
import pytest

import icefloe
from icefloe.core.object_store import ObjectStoreIO
from icefloe.errors import FileAlreadyExistsError, ObjectStoreError, VersionConflict
from tests.objectstore.test_s3_tables import _arrow_rows, _rows
from tools.azurite_server import ACCOUNT, ACCOUNT_KEY
from tools.gcs_server import TOKEN


class Store:
    """One emulator as the tests see it: its properties, fresh warehouses, its objects."""

    def __init__(self, kind, server):
        self.kind, self.server = kind, server
        self.properties = server.properties

    def new_bucket(self) -> str:
        return self.server.new_bucket() if self.kind == "gs" else self.server.new_container()

    def location(self, bucket: str, path: str = "wh") -> str:
        if self.kind == "abfs":                 # the account in the location, not in the properties
            return f"abfs://{bucket}@{ACCOUNT}.dfs.core.windows.net/{path}"
        return f"{self.kind}://{bucket}/{path}"

    def warehouse(self) -> str:
        return self.location(self.new_bucket())

    def keys(self, warehouse: str) -> list:
        bucket = warehouse.split("://", 1)[1].split("/", 1)[0].split("@", 1)[0]
        return self.server.keys(bucket)

    @property
    def secret(self) -> str:
        return TOKEN if self.kind == "gs" else ACCOUNT_KEY


def _store(request) -> Store:
    server = request.getfixturevalue("gcs_server" if request.param == "gs" else "azure_server")
    s = Store(request.param, server)
    if request.param == "abfs":
        s.properties = {k: v for k, v in s.properties.items() if k != "adls.account-name"}
    return s


@pytest.fixture(params=["gs", "az", "abfs"])
def store(request):
    return _store(request)


@pytest.fixture(params=["gs", "az"])
def spark_store(request):
    """The stores for the tests with Spark work (abfs:// is az:// with the account in the location)."""
    return _store(request)


def _catalog(spark, store, fmt="iceberg", warehouse=None):
    return icefloe.Catalog(warehouse or store.warehouse(), format=fmt, spark=spark, **store.properties)


def test_iceberg_table_written_by_spark_changed_and_read_back(spark, spark_store):
    store = spark_store
    cat = _catalog(spark, store)
    t = cat.create_table("db.t", "id bigint not null, name string", partitioned_by=["bucket(2, id)"],
                         properties={"write.update.mode": "merge-on-read"})
    t.append(spark.range(0, 40).selectExpr("id", "cast(id as string) as name"))
    t.append(pa.table({"id": pa.array(range(40, 50), pa.int64()), "name": [str(i) for i in range(40, 50)]}))
    cat.sql("DELETE FROM db.t WHERE id % 5 = 0")                              # copy-on-write
    cat.sql("UPDATE db.t SET name = 'u' WHERE id < 10")                       # merge-on-read: position deletes
    spark.range(45, 55).selectExpr("id", "'m' as name").createOrReplaceTempView("store_src")
    cat.sql("MERGE INTO db.t AS t USING store_src AS s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *")
    model = {i: ("u" if i < 10 else str(i)) for i in range(50) if i % 5}
    model.update({i: "m" for i in range(45, 55)})
    expected = sorted(model.items())
    again = _catalog(spark, store, warehouse=cat.warehouse).load_table("db.t")    # a fresh reader
    assert _rows(t.to_spark()) == expected
    assert _arrow_rows(again.to_arrow()) == expected
    assert any(int(s.summary.get("added-position-deletes", 0)) > 0 for s in t.snapshots())
    keys = store.keys(cat.warehouse)
    assert all(k.startswith("wh/db/t/") for k in keys), keys[:5]
    assert any(k.endswith(".metadata.json") for k in keys) and any(k.endswith(".parquet") for k in keys)
    assert again.check().ok


def test_paimon_tables_written_by_spark_upserted_and_read_back(spark, spark_store):
    store = spark_store
    cat = _catalog(spark, store, "paimon")
    a = cat.create_table("db.a", "id bigint, name string, dt string", partitioned_by=["dt"])
    a.append(spark.range(0, 30).selectExpr("id", "cast(id as string) as name", "cast(id % 2 as string) as dt"))
    cat.sql("DELETE FROM db.a WHERE id % 10 = 0")
    k = cat.create_table("db.k", "id bigint not null, name string", properties={"primary-key": "id", "bucket": "2"})
    k.append(spark.range(0, 20).selectExpr("id", "'a' as name"))
    k.append(spark.range(10, 30).selectExpr("id", "'b' as name"))                # an upsert of 10..19
    cat.sql("DELETE FROM db.k WHERE id < 5")
    fresh = _catalog(spark, store, "paimon", warehouse=cat.warehouse)
    for name, expected in (("a", {i: str(i) for i in range(30) if i % 10}),
                           ("k", {i: ("a" if i < 10 else "b") for i in range(5, 30)})):
        assert _rows(cat.load_table(f"db.{name}").to_spark()) == sorted(expected.items())
        assert _arrow_rows(fresh.load_table(f"db.{name}").to_arrow()) == sorted(expected.items())
    assert all(key.startswith("wh/db.db/") for key in store.keys(cat.warehouse))


def _race(n, attempt):
    """``attempt(i)`` in n threads at once: the indexes that won and those that lost."""
    start = threading.Barrier(n)
    won, lost = [], []

    def run(i):
        start.wait()
        (won if attempt(i) else lost).append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return won, lost


def test_create_if_absent_and_commits_on_one_base_have_exactly_one_winner(store):
    from icefloe.iceberg.hadoop import HadoopTableOperations
    from icefloe.paimon.snapshot import SnapshotManager

    wh = store.warehouse()
    io = ObjectStoreIO(store.properties)
    path = f"{wh}/race/object"

    def put(i):
        try:
            io.write_bytes(path, f"writer {i}".encode(), overwrite=False)
            return True
        except FileAlreadyExistsError:
            return False
    won, lost = _race(8, put)
    assert len(won) == 1 and len(lost) == 7
    assert io.read_bytes(path) == f"writer {won[0]}".encode()

    rows = pa.table({"id": pa.array([1], pa.int64()), "v": ["1"]})
    t = icefloe.Catalog(wh, **store.properties).create_table("db.t", "id bigint, v string")
    t.append(rows)
    ops = HadoopTableOperations(io, t.location)
    version, base = ops.load()

    def commit(i):                               # two writers, the same base version
        try:
            ops.commit(version, base, replace(base, properties={**base.properties, "writer": str(i)}))
            return True
        except VersionConflict:
            return False
    won, lost = _race(2, commit)
    assert len(won) == 1 and len(lost) == 1
    assert ops.load()[0] == version + 1 and ops.load()[1].properties["writer"] == str(won[0])

    p = icefloe.Catalog(wh, format="paimon", **store.properties).create_table("db.p", "id bigint, v string")
    p.append(rows)
    snapshots = SnapshotManager(io, p.location)
    latest = snapshots.latest()
    won, lost = _race(2, lambda i: snapshots.try_commit(replace(latest, id=latest.id + 1, commit_identifier=100 + i)))
    assert len(won) == 1 and len(lost) == 1
    assert snapshots.snapshot(latest.id + 1).commit_identifier == 100 + won[0]


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_concurrent_writers_lose_no_commit(store, fmt):
    wh = store.warehouse()
    icefloe.Catalog(wh, format=fmt, **store.properties).create_table("db.t", "id bigint, v string")
    tables = [icefloe.Catalog(wh, format=fmt, **store.properties).load_table("db.t") for _ in range(2)]

    def write(i):
        for n in range(3):
            k = i * 10 + n
            tables[i].append(pa.table({"id": pa.array([k], pa.int64()), "v": [str(k)]}))
        return True
    _race(2, write)
    t = icefloe.Catalog(wh, format=fmt, **store.properties).load_table("db.t")
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2, 10, 11, 12]
    assert len(t.snapshots()) == 6


def test_missing_bucket_bad_endpoint_and_credentials_are_named_secrets_never_shown(store):
    props = store.properties
    wh = store.warehouse()
    what = "bucket" if store.kind == "gs" else "container"
    endpoint = "gcs.service.host" if store.kind == "gs" else "adls.blob-storage-authority"
    dead = "http://127.0.0.1:1" if store.kind == "gs" else "127.0.0.1:1"
    credentials = ("gcs.oauth2.token",) if store.kind == "gs" else ("adls.account-key",)
    cases = [
        (props, store.location("no-such-bucket-here"), f"the {what} 'no-such-bucket-here' does not exist"),
        (dict(props, **{endpoint: dead}), wh, "is unreachable"),
        ({k: v for k, v in props.items() if k not in credentials}, wh, "no credentials"),
    ]
    for conf, location, words in cases:
        with pytest.raises(ObjectStoreError) as e:
            icefloe.Catalog(location, **conf)
        assert words in str(e.value), str(e.value)
        assert store.secret not in str(e.value)
    cat = icefloe.Catalog(wh, **props)
    assert store.secret not in repr(cat) and store.secret not in repr(cat.io)


def test_gcs_without_credentials_for_an_emulator_and_azure_by_connection_string(gcs_server, azure_server):
    """``gcs.anonymous=true`` sends no credentials at all (an emulator, a public bucket); Azure's
    connection string names the account, key and endpoint in one property, and is masked whole."""
    anon = {"gcs.service.host": gcs_server.endpoint, "gcs.anonymous": "true"}
    t = icefloe.Catalog(f"gs://{gcs_server.new_bucket()}/wh", **anon).create_table("db.t", "id bigint")
    t.append(pa.table({"id": pa.array([7], pa.int64())}))
    assert icefloe.Catalog(t.location.rsplit("/db/", 1)[0], **anon).load_table("db.t").to_arrow()["id"].to_pylist() == [7]

    conn = (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint={azure_server.endpoint};")
    wh = f"az://{azure_server.new_container()}/wh"
    cat = icefloe.Catalog(wh, format="paimon", **{"adls.connection-string": conn})
    p = cat.create_table("db.p", "id bigint")
    p.append(pa.table({"id": pa.array([8], pa.int64())}))
    assert p.to_arrow()["id"].to_pylist() == [8]
    assert ACCOUNT_KEY not in repr(cat.io)
