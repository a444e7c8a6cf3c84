# pyright: strict
"""Paimon tags: named snapshots that outlive snapshot expiration.

A tag is a file ``<table>/tag/tag-<name>`` holding the JSON of the snapshot it names:
icefloe copies the snapshot file byte for byte. Paimon 0.8 and later add two optional
fields to tags created with a retention time -- ``tagCreateTime`` (a local date-time,
written as Jackson writes ``LocalDateTime``: ``[year, month, day, hour, minute, second,
nanos]``, trailing zero parts left out) and ``tagTimeRetained`` (a duration in decimal
seconds) -- and leave both out otherwise, so that older readers can read the tag.
icefloe reads both (pypaimon 2.1 writes them too) and writes both, as Paimon does, for a
tag created with a retention time (``time_retained``); icefloe's own commits do not expire
tags by age (Paimon's writers do, at their commits).

Names: a tag name is one file name. Paimon refuses blank names; icefloe also refuses
names that are not one plain path component (``/``, ``\\``, ``.``, ``..``, control
characters) and names longer than 200 UTF-8 bytes. Names made of digits are allowed, as
in Paimon 1.x; ``VERSION AS OF '7'`` then means the tag, as Paimon resolves a version
string to a tag before a snapshot id.

A tag keeps alive everything its snapshot reaches: manifest lists, manifests and the
data files live in it. Snapshot expiration (``expire.py``) and rollback
(``maintenance.py``) leave those files alone. Deleting (or moving) a tag whose snapshot
has expired deletes the files only it kept alive: what neither another tag nor the
earliest snapshot reaches. The earliest snapshot stands for every retained snapshot
because history is linear: a file is live over one unbroken range of snapshots, so a
file live in an expired tag's snapshot and in any retained snapshot is live in the
earliest one; a manifest likewise is used by an unbroken range of snapshots.

A tag written while an expiration runs: ``create_tag`` checks after writing the tag
that its snapshot still exists (else it removes the tag and fails), and expiration
lists the tags again after deleting the snapshot files, before deleting anything else.
Either the expiration sees the new tag, or the tag sees its snapshot gone.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Iterable, Optional, cast

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.core.progress import track
from icefloe.errors import CorruptMetadataError, InvalidNameError, NoSuchSnapshotError
from icefloe.paimon.snapshot import Snapshot
from icefloe.errors import TagError, TagAlreadyExistsError, NoSuchTagError  # noqa: F401 - defined in icefloe.errors, importable here too

if TYPE_CHECKING:
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.manifest import ManifestEntry

TAG_DIR = "tag"
TAG_PREFIX = "tag-"
MAX_NAME_BYTES = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_tag_name(name: object) -> str:
    """``name`` if it can name a tag file; else :class:`InvalidNameError`."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidNameError(f"invalid tag name {name!r}: a tag name must not be blank")
    if "/" in name or "\\" in name or name in (".", "..") or _CONTROL.search(name):
        raise InvalidNameError(f"invalid tag name {name!r}: a tag name is one file name (no '/', '\\', "
                               "control characters, and not '.' or '..')")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidNameError(f"invalid tag name {name[:40]!r}...: longer than {MAX_NAME_BYTES} bytes")
    return name


# --------------------------------------------------------------------------- tag files
@dataclass(frozen=True)
class Tag:
    name: str
    snapshot: Snapshot
    create_time: Optional[_dt.datetime] = None       # tagCreateTime: local wall-clock time, no zone
    time_retained: Optional[_dt.timedelta] = None    # tagTimeRetained
    raw: bytes = field(default=b"", repr=False, compare=False)

    # the attributes the format-independent SQL layer reads from a ref
    type = "tag"

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.id

    @property
    def max_ref_age_ms(self) -> Optional[int]:
        return None if self.time_retained is None else int(self.time_retained.total_seconds() * 1000)

    min_snapshots_to_keep = None
    max_snapshot_age_ms = None

    def same_snapshot(self, snap: Optional[Snapshot]) -> bool:
        """Whether ``snap`` is this tag's snapshot (same id and manifest lists)."""
        return snap is not None and snap.id == self.snapshot.id and \
            snap.base_manifest_list == self.snapshot.base_manifest_list and \
            snap.delta_manifest_list == self.snapshot.delta_manifest_list


def _create_time(value: object, path: str) -> Optional[_dt.datetime]:
    if value is None:
        return None
    try:
        if isinstance(value, list):
            items = cast("list[Any]", value)      # JSON values, each checked by int()
            parts = [int(v) for v in items] + [0] * (7 - len(items))
            if len(items) < 3 or len(parts) > 7:
                raise ValueError(f"{len(items)} parts")
            y, mo, d, h, mi, s, nanos = parts
            return _dt.datetime(y, mo, d, h, mi, s, nanos // 1000)
        if isinstance(value, str):
            return _dt.datetime.fromisoformat(value)
        raise ValueError(f"a {type(value).__name__}")
    except (ValueError, TypeError, OverflowError) as e:
        raise CorruptMetadataError(path, f"tagCreateTime {value!r} is not a date-time: {e}") from None


_ISO_DURATION = re.compile(r"^(-)?P(?:(\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$")


def _time_retained(value: object, path: str) -> Optional[_dt.timedelta]:
    if value is None:
        return None
    try:
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return _dt.timedelta(seconds=float(value))
        if isinstance(value, str):
            m = _ISO_DURATION.match(value.strip().upper())
            if m is None:
                return _dt.timedelta(seconds=float(Decimal(value)))
            sign, d, h, mi, s = m.groups()
            td = _dt.timedelta(days=int(d or 0), hours=int(h or 0), minutes=int(mi or 0),
                               seconds=float(s or 0))
            return -td if sign else td
        raise ValueError(f"a {type(value).__name__}")
    except (ValueError, TypeError, OverflowError, InvalidOperation) as e:
        raise CorruptMetadataError(path, f"tagTimeRetained {value!r} is not a duration: {e}") from None


def parse_tag(name: str, data: bytes, path: str) -> Tag:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptMetadataError(path, "tag file is not UTF-8 JSON") from None
    snap = Snapshot.from_json(text, path)
    try:
        doc = json.loads(text, parse_float=Decimal)
    except ValueError as e:  # pragma: no cover - from_json parsed it already
        raise CorruptMetadataError(path, f"not a Paimon tag: {e}") from None
    return Tag(name, snap, _create_time(doc.get("tagCreateTime"), path),
               _time_retained(doc.get("tagTimeRetained"), path), data)


def duration_text(td: Optional[_dt.timedelta]) -> Optional[str]:
    """A duration as Java's ``Duration.toString`` writes it (``PT24H``, ``PT1M30.5S``)."""
    if td is None:
        return None
    micros = td // _dt.timedelta(microseconds=1)
    if micros == 0:
        return "PT0S"
    sign, micros = ("-", -micros) if micros < 0 else ("", micros)
    secs, frac = divmod(micros, 1_000_000)
    h, rest = divmod(secs, 3600)
    m, s = divmod(rest, 60)
    out = "PT" + (f"{sign}{h}H" if h else "") + (f"{sign}{m}M" if m else "")
    if s or frac:
        out += f"{sign}{s}" + (f".{frac:06d}".rstrip("0") if frac else "") + "S"
    return out


class TagManager:
    """Finds, reads and writes the tag files of one table directory."""

    def __init__(self, io: FileIO, table_path: str):
        self.io = io
        self.table_path = table_path.rstrip("/")
        self.tag_dir = f"{self.table_path}/{TAG_DIR}"

    def tag_path(self, name: str) -> str:
        return f"{self.tag_dir}/{TAG_PREFIX}{check_tag_name(name)}"

    def names(self) -> list[str]:
        """Tag names, from the file names alone (temporary files start with '.')."""
        return [n[len(TAG_PREFIX):] for n in self.io.list_dir(self.tag_dir)
                if n.startswith(TAG_PREFIX) and len(n) > len(TAG_PREFIX)]

    def exists(self, name: str) -> bool:
        return self.io.exists(self.tag_path(name))

    def get(self, name: str) -> Optional[Tag]:
        path = self.tag_path(name)
        try:
            data = self.io.read_bytes(path)
        except (FileNotFoundError, IsADirectoryError):
            return None
        return parse_tag(name, data, path)

    def tag(self, name: str) -> Tag:
        t = self.get(name)
        if t is None:
            raise NoSuchTagError(f"table {self.table_path} has no tag {name!r}; tags are "
                                 f"{sorted(self.names()) or 'none'}")
        return t

    def tags(self) -> list[Tag]:
        """Every tag, ordered by snapshot id then name. A tag file that cannot be read is an
        error: what it keeps alive is unknown."""
        out: list[Tag] = []
        for name in self.names():
            t = self.get(name)
            if t is not None:     # deleted since listing
                out.append(t)
        return sorted(out, key=lambda t: (t.snapshot.id, t.name))

    def write(self, name: str, data: bytes, overwrite: bool) -> None:
        try:
            self.io.write_bytes(self.tag_path(name), data, overwrite=overwrite)
        except FileAlreadyExistsError:
            raise TagAlreadyExistsError(f"tag {name!r} already exists in table {self.table_path}") from None

    def delete_file(self, name: str) -> None:
        self.io.delete(self.tag_path(name))


# --------------------------------------------------------------------------- reachability
@dataclass
class Reach:
    """Files some snapshots reach: manifest lists, manifests, data files (with extra files)."""
    lists: set[str] = field(default_factory=set[str])
    manifests: set[str] = field(default_factory=set[str])
    data: set[str] = field(default_factory=set[str])

    def update(self, other: "Reach") -> "Reach":
        self.lists |= other.lists
        self.manifests |= other.manifests
        self.data |= other.data
        return self


def reach(store: FileStore, snapshots: Iterable[Snapshot], data: bool = True, description: Optional[str] = None) -> Reach:
    """What ``snapshots`` reach; with ``data=False`` manifest lists and manifests only."""
    import os

    out = Reach()
    snapshots = list(snapshots)
    items = track(snapshots, description) if description else snapshots
    for snap in items:
        for lst in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
            if lst:
                out.lists.add(lst)
        metas = store.data_manifests(snap)
        if snap.changelog_manifest_list:
            metas = metas + store.read_manifest_list(snap.changelog_manifest_list,
                                                     snap.changelog_manifest_list_size)
        out.manifests.update(m.file_name for m in metas)
        if snap.index_manifest:
            out.manifests.add(snap.index_manifest)
        if data:
            for e in store.live_entries(snap):
                path = store.data_file_path(e)
                out.data.add(path)
                for extra in e.file.extra_files or ():
                    out.data.add(f"{os.path.dirname(path)}/{extra}")
    return out


def data_paths(store: FileStore, entry: ManifestEntry) -> list[str]:
    """A data file's path and its extra files' paths."""
    import os

    path = store.data_file_path(entry)
    return [path] + [f"{os.path.dirname(path)}/{x}" for x in entry.file.extra_files or ()]


# --------------------------------------------------------------------------- operations
def _snapshot_bytes(store: FileStore, snapshot_id: Optional[int]) -> tuple[Snapshot, bytes]:
    snaps = store.snapshots
    if snapshot_id is None:
        sid = snaps.latest_id()
        if sid is None:
            raise NoSuchSnapshotError(f"table {store.table_path} has no snapshot to tag")
    else:
        if isinstance(snapshot_id, bool):
            raise NoSuchSnapshotError(f"snapshot {snapshot_id!r} does not exist in {store.table_path}")
        try:
            sid = int(snapshot_id)
        except (TypeError, ValueError):
            raise NoSuchSnapshotError(f"snapshot {snapshot_id!r} does not exist in {store.table_path}") from None
        if sid <= 0:
            raise NoSuchSnapshotError(f"snapshot {sid} does not exist in {snaps.snapshot_dir}")
    path = snaps.snapshot_path(sid)
    try:
        data = store.io.read_bytes(path)
    except FileNotFoundError:
        raise NoSuchSnapshotError(f"snapshot {sid} does not exist in {snaps.snapshot_dir}") from None
    try:
        snap = Snapshot.from_json(data.decode("utf-8"), path)
    except UnicodeDecodeError:
        raise CorruptMetadataError(path, "snapshot file is not UTF-8 JSON") from None
    if snap.id != sid:
        raise CorruptMetadataError(path, f"snapshot file holds id {snap.id}, expected {sid}")
    return snap, data


def _check_still_there(store: FileStore, mgr: TagManager, name: str, snap: Snapshot, restore: Optional[bytes]) -> None:
    """After writing tag ``name`` of ``snap``: if an expiration deleted the snapshot meanwhile,
    the files it reaches may be gone too; undo the tag write and fail."""
    if store.io.exists(store.snapshots.snapshot_path(snap.id)):
        return
    if restore is None:
        mgr.delete_file(name)
    else:
        mgr.write(name, restore, overwrite=True)
    raise NoSuchSnapshotError(f"snapshot {snap.id} of {store.table_path} expired while tag {name!r} was "
                              "written; the tag was not changed")


def tag_json(snapshot_json: bytes, time_retained: Optional[_dt.timedelta],
             now: Optional[_dt.datetime] = None) -> bytes:
    """A tag file's content: the snapshot's JSON, and with a retention time the two tag-only
    fields as Paimon's Jackson writes them (``tagCreateTime`` a local date-time as an array,
    trailing zero second and nanosecond left out; ``tagTimeRetained`` decimal seconds)."""
    if time_retained is None:
        return snapshot_json
    if time_retained <= _dt.timedelta(0):
        raise TagError(f"a tag's retention time must be positive, got {duration_text(time_retained)}")
    now = now or _dt.datetime.now()
    parts = [now.year, now.month, now.day, now.hour, now.minute]
    if now.second or now.microsecond:
        parts.append(now.second)
    if now.microsecond:
        parts.append(now.microsecond * 1000)
    micros = time_retained // _dt.timedelta(microseconds=1)
    seconds = f"{micros // 1_000_000}.{(micros % 1_000_000) * 1000:09d}"
    text = snapshot_json.decode("utf-8").rstrip()
    if not text.endswith("}"):
        raise CorruptMetadataError("snapshot", "snapshot JSON does not end with '}'")
    extra = (f',\n  "tagCreateTime" : [ {", ".join(str(p) for p in parts)} ],'
             f'\n  "tagTimeRetained" : {seconds}\n}}')
    return (text[:-1].rstrip() + extra).encode("utf-8")


def create_tag(store: FileStore, name: str, snapshot_id: Optional[int] = None,
               time_retained: Optional[_dt.timedelta] = None) -> Tag:
    """Tag ``snapshot_id`` (default: the latest snapshot) as ``name``, kept for ``time_retained``
    when given (recorded in the tag file, as Paimon does)."""
    mgr = TagManager(store.io, store.meta_path)
    check_tag_name(name)
    if mgr.exists(name):
        raise TagAlreadyExistsError(f"tag {name!r} already exists in table {store.table_path}")
    snap, data = _snapshot_bytes(store, snapshot_id)
    data = tag_json(data, time_retained)
    mgr.write(name, data, overwrite=False)      # create-if-absent: of two creators one wins
    _check_still_there(store, mgr, name, snap, None)
    return parse_tag(name, data, mgr.tag_path(name))


def replace_tag(store: FileStore, name: str, snapshot_id: Optional[int] = None,
                time_retained: Optional[_dt.timedelta] = None, keep_files: bool = False) -> Tag:
    """Point tag ``name`` at ``snapshot_id`` (default: the latest snapshot) with retention
    ``time_retained`` (none when not given, as Paimon's replace); the files only its old
    snapshot kept alive are deleted."""
    mgr = TagManager(store.io, store.meta_path)
    old = mgr.tag(name)
    snap, data = _snapshot_bytes(store, snapshot_id)
    if old.same_snapshot(snap) and old.time_retained is None and time_retained is None:
        return old
    data = tag_json(data, time_retained)
    if old.same_snapshot(snap):
        mgr.write(name, data, overwrite=True)
        return parse_tag(name, data, mgr.tag_path(name))
    plan = None if keep_files else _exclusive_files(store, mgr, old, extra_keep=[snap])
    mgr.write(name, data, overwrite=True)
    _check_still_there(store, mgr, name, snap, old.raw)
    _delete(store, plan)
    return parse_tag(name, data, mgr.tag_path(name))


def rename_tag(store: FileStore, name: str, new_name: str) -> Tag:
    """Rename tag ``name`` to ``new_name`` (the tag file moves; its snapshot and files stay)."""
    mgr = TagManager(store.io, store.meta_path)
    check_tag_name(new_name)
    tag = mgr.tag(name)                                     # NoSuchTagError
    if mgr.exists(new_name):
        raise TagAlreadyExistsError(f"tag {new_name!r} already exists in table {store.table_path}")
    store.io.rename(mgr.tag_path(name), mgr.tag_path(new_name))
    return Tag(new_name, tag.snapshot, tag.create_time, tag.time_retained, tag.raw)


def delete_tag(store: FileStore, name: str, keep_files: bool = False) -> list[str]:
    """Delete tag ``name`` and the files only it kept alive (none with ``keep_files``: a branch
    uses them); returns their paths."""
    mgr = TagManager(store.io, store.meta_path)
    tag = mgr.tag(name)
    plan = None if keep_files else _exclusive_files(store, mgr, tag)   # planned before anything is deleted
    mgr.delete_file(name)
    return _delete(store, plan)


def _exclusive_files(store: FileStore, mgr: TagManager, tag: Tag, extra_keep: Iterable[Snapshot] = ()) -> Optional[Reach]:
    """The files only ``tag`` keeps alive, or None when nothing may be deleted with it: its
    snapshot (or another tag of the same snapshot) still exists, or its snapshot lies inside
    the retained range without a snapshot file (a damaged table: nothing is judged)."""
    snaps = store.snapshots
    others = [t for t in mgr.tags() if t.name != tag.name]
    if any(tag.same_snapshot(t.snapshot) for t in others):
        return None
    earliest = snaps.earliest_id()
    if earliest is not None and tag.snapshot.id >= earliest:
        return None     # its snapshot is retained (or missing inside the retained range)
    keep_snaps = [t.snapshot for t in others] + list(extra_keep)
    if earliest is not None:
        keep_snaps.append(snaps.snapshot(earliest))
    keep = reach(store, keep_snaps, description="reading tags")
    mine = reach(store, [tag.snapshot])
    return Reach(mine.lists - keep.lists, mine.manifests - keep.manifests, mine.data - keep.data)


def _delete(store: FileStore, plan: Optional[Reach]) -> list[str]:
    """Data files, then manifests, then manifest lists (each only after what refers to it)."""
    if plan is None:
        return []
    deleted: list[str] = []
    for path in track(sorted(plan.data), "deleting data files"):
        store.io.delete(path)
        deleted.append(path)
    for name in track(sorted(plan.manifests) + sorted(plan.lists), "deleting manifests"):
        store.delete_manifest_file(name)
        deleted.append(store.manifest_path(name))
    return deleted


def tags_reach(store: FileStore, tags: Iterable[Tag], data_below: Optional[int] = None) -> Reach:
    """What ``tags`` keep alive: every tag's manifest lists and manifests, and the live data
    files of the tags whose snapshot id is below ``data_below`` (all if None)."""
    tags = list(tags)
    out = reach(store, [t.snapshot for t in tags], data=False)
    with_data = [t.snapshot for t in tags if data_below is None or t.snapshot.id < data_below]
    # tags of one snapshot share everything: read each snapshot once
    unique = list({(s.id, s.base_manifest_list, s.delta_manifest_list): s for s in with_data}.values())
    return out.update(reach(store, unique, description="reading tags") if unique else Reach())


__all__ = ["Tag", "TagManager", "TagError", "TagAlreadyExistsError", "NoSuchTagError", "check_tag_name",
           "create_tag", "replace_tag", "rename_tag", "delete_tag", "tag_json", "tags_reach", "reach", "Reach", "duration_text",
           "parse_tag", "data_paths"]
