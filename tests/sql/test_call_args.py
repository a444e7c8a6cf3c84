"""One binder for every procedure's arguments (Iceberg's table procedures, Paimon's, the
migrations): positional before named, at most one per parameter, none unknown, required ones
present; the errors point at the argument."""
import pytest

from icefloe.sql import migration_procedures, procedures
from icefloe.sql.call_args import bind_args
from icefloe.sql.errors import SqlError
from icefloe.sql.parser import split


def call_of(text: str):
    (stmt,) = split(text)
    return stmt.ext


def bound(text: str, params=("table", "source_table", "parallelism"), required=("table",)) -> dict:
    return {k: v.sql() for k, v in bind_args(call_of(text), params, required).items()}


def test_positional_and_named_arguments_bind_to_the_parameters():
    assert bound("CALL cat.system.add_files('db.t', PARALLELISM => 4)") == {"table": "'db.t'", "parallelism": "4"}
    assert bound("CALL cat.system.add_files(source_table => 'x', table => 'db.t')") == \
        {"table": "'db.t'", "source_table": "'x'"}


@pytest.mark.parametrize("text, message, column", [
    ("CALL c.system.add_files(table => 'a', 'b')", "positional arguments must come before named ones", 39),
    ("CALL c.system.add_files('a', 'b', 1, 2)", "add_files takes at most 3 arguments", 38),
    ("CALL c.system.add_files('a', tabel => 'b')", "unknown argument 'tabel' of add_files; arguments are "
                                                   "table, source_table, parallelism", 39),
    ("CALL c.system.add_files('a', table => 'b')", "argument 'table' given twice", 39),
    ("CALL c.system.add_files(parallelism => 2)", "add_files needs argument 'table'", None),
])
def test_bad_arguments_are_refused_with_their_position(text, message, column):
    with pytest.raises(SqlError, match=message) as e:
        bound(text)
    if column is not None:
        assert e.value.column == column


def test_the_procedures_share_the_binder():
    """The table procedures and the migrations bind through the same function (one rule set)."""
    assert procedures.bind_args is bind_args and migration_procedures.bind_args is bind_args
    spec = migration_procedures.PROCEDURES["migrate"]
    with pytest.raises(SqlError, match="migrate takes at most 6 arguments"):
        bind_args(call_of("CALL c.system.migrate('a', map(), true, 'b', 1, false, 7)"), spec.params, spec.required)
