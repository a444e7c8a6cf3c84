"""The seams rule (``tools/private_reach.py``, run by ``make lint``): no module reaches into a
table's, a SQL session's or a catalog's private attributes from outside the module that owns them,
nor imports another icefloe module's private name."""
import os
import pathlib
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools import private_reach  # noqa: E402

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "icefloe"


def test_the_package_reaches_into_no_private_attribute_across_a_seam():
    found = {str(p): private_reach.reaches(p) for p in PACKAGE.rglob("*.py")}
    assert {p: r for p, r in found.items() if r} == {}


def test_a_private_reach_is_found_and_an_owned_name_is_not(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(textwrap.dedent("""
        class Owner:
            def __init__(self):
                self._mine = 1

            def same(self, other):
                return self._mine + other._mine        # a class may touch another instance of itself

        def writes(table, sess, catalog, t, obj):
            table._commit(1, "main")
            t._app_summary()
            text = sess._stmt.text
            ops = catalog._impl._ops("db.t")
            return obj.inner._spark, obj._other           # a seam name on any receiver; not another name
    """))
    assert [text for _line, text in private_reach.reaches(module)] == [
        "table._commit", "t._app_summary", "sess._stmt", "catalog._impl", "catalog._impl._ops", "obj.inner._spark"]
    assert private_reach.main(["private_reach", str(tmp_path)]) == 1
    module.write_text(textwrap.dedent("""
        from __future__ import annotations
        from json import _default_decoder
        from icefloe.core.names import split_name as _split_name
        from icefloe.spark.datasource import _location, detect_format

        def f():
            from .helpers import _arrow_target, __version__
    """))
    assert [text for _line, text in private_reach.reaches(module)] == [
        "from icefloe.spark.datasource import _location", "from .helpers import _arrow_target"]
    module.write_text("def fine(table):\n    return table.commit(1, table.branch)\n")
    assert private_reach.main(["private_reach", str(tmp_path)]) == 0


def _format_tests(path: pathlib.Path) -> list:
    """``t.format == "paimon"``-like comparisons of an object's format in the module at ``path`` (the
    command line's ``--format`` option, which says what catalog to open, is not a table's)."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(isinstance(s, ast.Attribute) and s.attr == "format" for s in sides)
        literal = any(isinstance(s, ast.Constant) and s.value in ("iceberg", "paimon") for s in sides)
        if named and literal:
            out.append(node.lineno)
    return out


def test_the_command_line_sql_and_streaming_never_ask_a_table_its_format():
    """What differs by format is behind the table contract, a named capability or a stream's
    ``StreamFormat``; the callers never branch on a format's name."""
    callers = [*(PACKAGE / "cli").rglob("*.py"), *(PACKAGE / "sql").rglob("*.py"), PACKAGE / "spark" / "streaming.py"]
    found = {str(p.relative_to(PACKAGE)): lines for p in callers if (lines := _format_tests(p))}
    assert found == {}
