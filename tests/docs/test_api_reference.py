"""The Python API reference documents what users call, and every parameter of it.

The reference page (docs/api.md) lists the members it renders; each of them must have a docstring
that names every parameter, and every public method of the user-facing classes must be on the
page (or be one of the few the SQL layer and the command line use, listed below). The errors page
lists every error class a user can meet."""
import inspect
import re
from pathlib import Path

import pytest

import icefloe
from icefloe import errors
from icefloe.table import Table
from icefloe.table.scan import TableScan
from icefloe.spark.merge_clauses import MergeClauses
from icefloe.spark.iceberg_dml import MergeBuilder
from icefloe.spark.paimon_append_dml import AppendMerge
from icefloe.spark.paimon_dml import PrimaryKeyMerge

DOCS = Path(__file__).resolve().parents[2] / "docs"

# Public names of the table contract that serve icefloe's SQL layer, command line and checks, not users
INTERNAL = {"unsupported", "partition_columns", "partitioning", "describe_columns", "narrow_column_types",
            "parse_column_type", "metadata_tree", "data_files", "shown_properties"}
# Error classes no user meets: a test's fault injection, and a commit outcome icefloe never reports
NOT_USER_ERRORS = {"InjectedFault", "CommitStateUnknownError"}


def rendered() -> dict:
    """``{object path: [members]}`` as docs/api.md renders them (``[]``: the object alone)."""
    out: dict = {}
    current, in_members = None, False
    for line in (DOCS / "api.md").read_text().splitlines():
        directive = re.match(r"::: (\S+)", line)
        if directive:
            current, in_members = directive.group(1), False
            out[current] = []
        elif current and line.strip() == "members:":
            in_members = True
        elif current and in_members and re.match(r"\s+- \w+$", line):
            out[current].append(line.strip()[2:])
        elif not line.startswith(" "):
            current, in_members = None, False
    return out


def resolve(path: str):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = __import__(".".join(parts[:i]), fromlist=["_"])
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(path)


def parameters(fn) -> list:
    fn = fn.fget if isinstance(fn, property) else fn
    if not callable(fn):
        return []
    return [p.name for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]


def documented() -> list:
    items = []
    for path, members in rendered().items():
        obj = resolve(path)
        if inspect.isclass(obj):
            items.append(pytest.param(obj.__init__ if "__init__" in vars(obj) else obj, f"{path}.__init__",
                                      id=f"{path}.__init__"))
            items += [pytest.param(inspect.getattr_static(obj, m), f"{path}.{m}", id=f"{path}.{m}") for m in members]
        else:
            items.append(pytest.param(obj, path, id=path))
    return items


def test_the_reference_renders_the_user_facing_objects():
    paths = rendered()
    for path in ("icefloe.Catalog", "icefloe.load_catalog", "icefloe.load_table", "icefloe.table.Table",
                 "icefloe.table.IcebergTable", "icefloe.table.PaimonTable", "icefloe.table.scan.TableScan",
                 "icefloe.spark.merge_clauses.MergeClauses"):
        assert path in paths, path
    assert {"to_spark", "write_files"} <= set(paths["icefloe.table.IcebergTable"])
    assert {"to_spark", "to_arrow"} <= set(paths["icefloe.table.PaimonTable"])


@pytest.mark.parametrize("obj, path", documented())
def test_every_rendered_member_documents_each_parameter(obj, path):
    fn = obj.fget if isinstance(obj, property) else obj
    doc = inspect.getdoc(fn) if not inspect.isclass(fn) else (fn.__doc__ or "")
    if isinstance(obj, (staticmethod, classmethod)):
        fn = obj.__func__
        doc = inspect.getdoc(fn)
    assert doc and doc.strip(), f"{path} has no docstring"
    names = [] if inspect.isclass(fn) else parameters(fn)
    missing = [n for n in names if not re.search(rf"^\s+\**{re.escape(n)}(\s*\([^)]*\))?:", doc, re.M)]
    assert not missing, f"{path}: no Args entry for {missing}"


def public_methods(cls) -> set:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n, None))}


@pytest.mark.parametrize("cls, path, users_call", [
    (icefloe.Catalog, "icefloe.Catalog", lambda n: True),
    (Table, "icefloe.table.Table", lambda n: n not in INTERNAL),
    (TableScan, "icefloe.table.scan.TableScan", lambda n: n != "table"),
    (MergeClauses, "icefloe.spark.merge_clauses.MergeClauses", lambda n: n.startswith("when_")),   # the rest plan
])
def test_every_public_method_of_a_user_facing_class_is_in_the_reference(cls, path, users_call):
    on_page = set(rendered()[path])
    missing = {n for n in public_methods(cls) if users_call(n)} - on_page
    assert not missing, f"{path}: public methods missing from docs/api.md: {sorted(missing)}"


@pytest.mark.parametrize("builder", [MergeBuilder, PrimaryKeyMerge, AppendMerge])
def test_each_merge_builder_documents_execute(builder):
    doc = inspect.getdoc(builder.execute)
    assert "Returns:" in doc and "snapshot_id" in doc


def test_the_errors_page_lists_every_error_a_user_can_meet():
    page = (DOCS / "reference" / "errors.md").read_text()
    rows = [line.split(" | ")[0] for line in page.splitlines() if line.startswith("| `")]
    on_page = {name for row in rows for name in re.findall(r"`(\w+)`", row) if name[0].isupper()}
    defined = {n for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, BaseException)
               and c.__module__ == errors.__name__} - NOT_USER_ERRORS
    assert defined - on_page == set(), "errors missing from the page"
    for name in on_page:
        assert name in defined or name in ("ConfigError", "CatalogDatabaseError", "RestCatalogError",
                                           "StreamingSetupError"), f"{name} on the page is not a user's error"
