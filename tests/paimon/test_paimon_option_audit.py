"""The audit of Paimon's table options: every key of Paimon's CoreOptions (release 1.4.2, extracted to
``data/paimon_core_options_1.4.2.txt``) is honoured, accepted with a reason, or refused by name with a
reason; creating or altering a table with a refused one is an error and leaves nothing behind."""
import os

import pytest

from icefloe.errors import SchemaError
from icefloe.paimon import options as opt
from icefloe.paimon.catalog import PaimonCatalog
from icefloe.paimon.schema import list_schema_ids

KEYS_FILE = os.path.join(os.path.dirname(__file__), "data", "paimon_core_options_1.4.2.txt")


def _keys() -> list:
    with open(KEYS_FILE) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def test_every_core_option_is_classified_with_a_reason():
    keys = _keys()
    assert len(keys) == 282
    missing = [k for k in keys if opt.audit(k) is None]
    assert missing == []
    assert set(opt.AUDIT) == set(keys)          # nothing classified that Paimon does not have
    for k in keys:
        kind, why, _harmless = opt.audit(k)
        assert kind in (opt.HONOURED, opt.ACCEPTED, opt.REFUSED) and len(why) > 20, k


@pytest.mark.parametrize("key,value", [("record-level.expire-time", "1 d"), ("data-file.external-paths", "s3://b/p"),
                                        ("file.compression.per.level", "0:lz4"), ("type", "format-table"),
                                        ("incremental-between", "1,2"), ("variant.shreddingSchema", "{}")])
def test_refused_options_fail_create_and_alter_naming_the_option(tmp_path, key, value):
    cat = PaimonCatalog(str(tmp_path / "wh"))
    with pytest.raises(SchemaError, match=f"option '{key}' = '{value}' is not honoured: "):
        cat.create_table("db.t", "id int", properties={key: value})
    assert not cat.table_exists("db.t")
    t = cat.create_table("db.t", "id int")
    with pytest.raises(SchemaError, match=f"option '{key}'"):
        with t.update_schema() as u:
            u.set_option(key, value)
    assert key not in t.refresh().options and list(list_schema_ids(t.io, t.location)) == [0]


def test_accepted_options_and_harmless_values_of_refused_ones_are_kept(tmp_path):
    cat = PaimonCatalog(str(tmp_path / "wh"))
    kept = {"write-buffer-size": "256 mb", "compaction.optimization-interval": "1 h", "sink.process-time-zone": "UTC",
            "metastore.partitioned-table": "true", "row-tracking.enabled": "false", "manifest.format": "avro",
            "type": "table"}
    t = cat.create_table("db.t", "id int", properties=kept)
    assert {k: t.options[k] for k in kept} == kept
