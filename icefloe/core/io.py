"""The one file I/O layer every metadata and data access goes through.

Only local (and mounted) file systems are implemented. A commit needs one
primitive from the store: *create a file only if it does not exist yet*, made
visible atomically. Locally that is a write to a hidden temporary file followed
by ``os.link`` (which fails if the target exists), so a half-written metadata
file is never visible and two writers can never both win the same name.

Tests subclass :class:`FileIO` to inject faults at every write, rename and delete.
"""
from __future__ import annotations

import errno
import os
import shutil
import uuid
from contextlib import contextmanager
from typing import Any, BinaryIO, Callable, Generator, Iterator
from urllib.parse import urlparse

from icefloe.errors import AfterCommitError
from icefloe.errors import FileAlreadyExistsError  # noqa: F401 - defined in icefloe.errors, importable here too


def strip_scheme(path: str) -> str:
    if path.startswith("file:"):
        p = urlparse(path)
        return p.path
    return path


def _local_path(path: str) -> str:
    """A path of the local file system; a URI of another store is refused (it would otherwise be
    written as a local directory named after its scheme)."""
    if is_remote(path):
        from icefloe.errors import ObjectStoreError

        raise ObjectStoreError(f"{path} is not on the local file system: open its catalog or table with the "
                               "object store's settings (s3.endpoint, s3.access-key-id, ...)")
    return strip_scheme(path)


class FileIO:
    """Local file system I/O. Paths may be plain or ``file:`` URIs."""

    #: whether Spark's own Parquet reader and writer can take this I/O's paths (a local disk: yes;
    #: an object store only when the Spark session has its connector, see ``object_store``)
    spark_native = True
    #: how many independent reads (manifests, footers) a planner may run at once: one on a local
    #: disk, many on an object store, where each read is a request with its own latency
    parallel_reads = 1
    #: whether an empty directory exists (a file system: yes; an object store, where a prefix exists
    #: only while an object is under it: no)
    keeps_empty_dirs = True

    def for_tasks(self) -> "FileIO":
        """The FileIO that Spark tasks get (pickled): this one, unless it is a driver-side wrapper
        (one that counts or injects faults) whose state means nothing in another process."""
        return self

    # ------------------------------------------------------------------ reads
    def read_bytes(self, path: str) -> bytes:
        with open(_local_path(path), "rb") as f:
            return f.read()

    def open_read(self, path: str) -> BinaryIO:
        return open(_local_path(path), "rb")

    def exists(self, path: str) -> bool:
        return os.path.exists(_local_path(path))

    def size(self, path: str) -> int:
        return os.path.getsize(_local_path(path))

    def mtime_ms(self, path: str) -> int:
        return int(os.path.getmtime(_local_path(path)) * 1000)

    def list_dir(self, path: str) -> list[str]:
        p = _local_path(path)
        try:
            return sorted(os.listdir(p))
        except FileNotFoundError:
            return []

    def walk_files(self, path: str) -> Iterator[str]:
        for root, _dirs, files in os.walk(_local_path(path)):
            for name in files:
                yield os.path.join(root, name)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(_local_path(path))

    # ------------------------------------------------------------------ writes
    def makedirs(self, path: str) -> None:
        os.makedirs(_local_path(path), exist_ok=True)

    def write_bytes(self, path: str, data: bytes, overwrite: bool = True) -> None:
        """Write ``data`` to ``path`` so it appears whole or not at all.

        With ``overwrite=False`` raise :class:`FileAlreadyExistsError` if the path
        exists, also when another process creates it concurrently.
        """
        self._put_whole(path, data, overwrite, sync=True)

    def write_hint(self, path: str, data: bytes) -> None:
        """Replace the hint file ``path`` (a table's latest version or snapshot id) whole. Not
        synced to disk: readers check what a hint says, and a lost one costs them a listing."""
        self._put_whole(path, data, overwrite=True, sync=False)

    def _put_whole(self, path: str, data: bytes, overwrite: bool, sync: bool) -> None:
        p = _local_path(path)
        d = os.path.dirname(p)
        os.makedirs(d, exist_ok=True)
        tmp = os.path.join(d, f".{os.path.basename(p)}.{uuid.uuid4().hex}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        try:
            if overwrite:
                self._replace(tmp, p)
            else:
                self._link_if_absent(tmp, p)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def open_write(self, path: str) -> BinaryIO:
        """A new file for streaming writes (data files: their visibility comes from the commit)."""
        p = _local_path(path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return open(p, "xb")

    def _replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def _link_if_absent(self, src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except FileExistsError as e:
            raise FileAlreadyExistsError(dst) from e
        except OSError as e:  # file systems without hard links
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            fd = os.open(dst, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
                shutil.copyfileobj(inp, out)

    def rename(self, src: str, dst: str) -> None:
        d = os.path.dirname(_local_path(dst))
        os.makedirs(d, exist_ok=True)
        os.rename(_local_path(src), _local_path(dst))

    def delete(self, path: str) -> None:
        try:
            os.unlink(_local_path(path))
        except FileNotFoundError:
            pass

    def delete_tree(self, path: str) -> None:
        shutil.rmtree(_local_path(path), ignore_errors=True)


LOCAL = FileIO()


def _path_of(f: Any) -> str:
    return f if isinstance(f, str) else f.file_path


@contextmanager
def staged_files(io: "FileIO", path: Callable[[Any], str] = _path_of) -> Generator[list[Any], None, None]:
    """A list for the files a step writes before its commit: when the block raises (a failed
    task, a refused value, an interrupt), every file in it is deleted through ``io`` and the error
    goes on, so a failed write leaves no file behind (but an ``AfterCommitError``: the commit is
    done and the files are the table's). The list holds paths or files with a ``file_path`` (data and
    delete files); ``path`` gives another item's path.

    ``with staged_files(io) as added: added.extend(write(...))``"""
    added: list[Any] = []
    try:
        yield added
    except AfterCommitError:
        raise
    except BaseException:
        for f in added:
            io.delete(path(f))
        raise


def is_remote(location: str) -> bool:
    """Whether ``location`` is a URI of a store other than the local file system."""
    head = location.split("://", 1)[0].lower() if "://" in location else ""
    return bool(head) and head != "file"


def normalize_location(location: str) -> str:
    """A warehouse or table location as icefloe keeps it: an absolute local path, or the URI of
    an object store as given (without a trailing slash)."""
    if is_remote(location):
        return location.rstrip("/")
    return os.path.abspath(strip_scheme(location))


def prune_empty_dirs(io: "FileIO", root: str) -> bool:
    """Remove ``root`` and the directories below it that hold no file; whether ``root`` went."""
    if not io.is_dir(root):
        return False
    empty = True
    for name in io.list_dir(root):
        child = f"{root.rstrip('/')}/{name}"
        if not is_remote(child) and os.path.islink(strip_scheme(child)):
            empty = False           # a link is an entry, never followed
            continue
        if not (io.is_dir(child) and prune_empty_dirs(io, child)):
            empty = False
    if empty:
        io.delete_tree(root)       # an empty directory
    return empty
