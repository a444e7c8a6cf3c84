"""The ``system.*`` functions of Iceberg's Spark extensions (spark-queries) in SELECT: the
partition transforms with the spec's worked values ("Appendix B: 32-bit Hash Requirements",
"Truncate Transform Details"), and the bucket a row was written to."""
from decimal import Decimal

import pytest

from icefloe.sql.errors import SqlError


def test_system_functions_give_the_specs_values(catalog):
    run = catalog.sql
    run("CREATE TABLE db.f (id bigint, s string, d date, n timestamp_ntz, m decimal(9,2)) USING iceberg "
        "PARTITIONED BY (bucket(16, id))")
    run("INSERT INTO db.f VALUES (34, 'iceberg', DATE '2017-11-16', TIMESTAMP_NTZ '2017-11-16 22:31:08', 10.65)")
    row = run("SELECT system.bucket(16, id), local.system.bucket(16, s), system.truncate(4, s), "
              "system.truncate(10, id), system.truncate(50, m), system.years(d), system.months(d), "
              "system.days(n), system.hours(n) FROM db.f").collect()[0]
    import datetime
    assert tuple(row) == (3, 9, "iceb", 30, Decimal("10.50"), 47, 574, datetime.date(2017, 11, 16), 419686)
    # the bucket the row's data file is partitioned by
    assert [tuple(r) for r in run("SELECT partition.id_bucket FROM db.f.files").collect()] == [(3,)]
    assert [r[0] for r in run("SELECT id FROM db.f WHERE system.bucket(16, id) = 3").collect()] == [34]
    assert run("SELECT system.iceberg_version()").collect()[0][0].startswith("icefloe ")
    assert run("SELECT system.truncate(3, -1)").collect()[0][0] == -3
    with pytest.raises(SqlError, match="unknown function system.bucketz"):
        run("SELECT system.bucketz(16, id) FROM db.f")
    with pytest.raises(SqlError, match="takes 2 argument"):
        run("SELECT system.bucket(id) FROM db.f")
