"""File I/O on HDFS (``hdfs://namenode:port/path``) through ``hdfs-native``, a client of HDFS's own
RPC and data transfer protocols (no JVM, no libhdfs).

This is the driver's side: metadata (Iceberg's ``vN.metadata.json``, manifests and manifest lists;
Paimon's snapshots, schemas and manifests). Spark's tasks read and write data files through Spark's
own HDFS client, which PySpark ships, so ``spark_native`` is true.

HDFS renames atomically, and a rename without overwrite fails when the target exists: that is the
commit point of both formats here, as it is for Iceberg's Hadoop catalog and Paimon's filesystem
catalog in Java. A file put whole (``write_bytes``) is written to a hidden temporary name beside
its target, closed, then renamed onto it; two writers of the same ``v3.metadata.json`` or
``snapshot-7`` never both win, and no reader sees half a file.

Configuration: Hadoop's own keys (``dfs.*``, ``fs.*``, ``hadoop.*``, ``ipc.*``) among the catalog's
properties go to the client (HA name services, ``dfs.client.use.datanode.hostname``, ...), over the
files of ``HADOOP_CONF_DIR`` that hdfs-native reads itself. Spark's tasks take theirs from the
Spark session's Hadoop configuration (``spark.hadoop.*``).
"""
from __future__ import annotations

import socket
import uuid
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator, Mapping, Optional, TypeVar, cast
from urllib.parse import urlparse

from icefloe.core.io import FileIO
from icefloe.errors import FileAlreadyExistsError, ObjectStoreError

if TYPE_CHECKING:
    import hdfs_native

T = TypeVar("T")

SCHEMES = ("hdfs",)
HADOOP_PREFIXES = ("dfs.", "fs.", "hadoop.", "ipc.")
_CONNECT_TIMEOUT_S = 5.0


def is_hdfs(location: str) -> bool:
    return "://" in location and location.split("://", 1)[0].lower() in SCHEMES


def _split(path: str) -> tuple[str, str]:
    """``hdfs://nn:8020/a/b`` -> ("nn:8020", "/a/b")."""
    p = urlparse(path)
    if p.scheme.lower() not in SCHEMES:
        raise ObjectStoreError(f"{path} is not an hdfs:// location")
    return p.netloc, "/" + p.path.lstrip("/")


def _first_line(e: Exception) -> str:
    """An HDFS error's message without the NameNode's Java stack trace."""
    return str(e).split("\n", 1)[0].strip()


class _Reader:
    """A seekable file over an HDFS file (what pyarrow's Parquet reader needs)."""

    def __init__(self, inner: hdfs_native.FileReader, path: str):
        self._inner = inner
        self._path = path
        self.closed = False

    def read(self, size: Optional[int] = -1) -> bytes:
        return bytes(self._inner.read(-1 if size is None else size))

    def readall(self) -> bytes:
        return self.read(-1)

    def seek(self, offset: int, whence: int = 0) -> int:
        self._inner.seek(offset, whence)        # hdfs-native's seek returns nothing: the new position is tell()
        return self._inner.tell()

    def tell(self) -> int:
        return self._inner.tell()

    def size(self) -> int:
        return len(self._inner)                 # (hdfs-native's ``size`` is a property, not a method)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._inner.close()

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HdfsIO(FileIO):
    """I/O on HDFS; paths are full URIs (``hdfs://namenode:port/path``). Pickles without its
    client connections, so Spark tasks rebuild them from the same configuration."""

    spark_native = True
    parallel_reads = 8

    def __init__(self, properties: Optional[Mapping[str, object]] = None):
        self.properties = {str(k): str(v) for k, v in (properties or {}).items() if v is not None}
        self._clients: dict[str, hdfs_native.Client] = {}

    def __repr__(self) -> str:
        return f"HdfsIO({sorted(self.hadoop_config())})"

    def __getstate__(self) -> dict[str, dict[str, str]]:
        return {"properties": self.properties}

    def __setstate__(self, state: dict[str, dict[str, str]]) -> None:
        self.properties = state["properties"]
        self._clients = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HdfsIO) and other.properties == self.properties

    __hash__ = None  # pyright: ignore[reportAssignmentType]  (mutable configuration: unhashable)

    def hadoop_config(self) -> dict[str, str]:
        """The properties that are Hadoop's own keys: the client's configuration."""
        return {k: v for k, v in self.properties.items() if k.startswith(HADOOP_PREFIXES)}

    # ------------------------------------------------------------------ client
    def _client(self, authority: str) -> hdfs_native.Client:
        if authority not in self._clients:
            try:
                import hdfs_native
            except ImportError:
                raise ObjectStoreError("hdfs:// locations need the hdfs-native package "
                                       "(pip install hdfs-native)") from None
            try:
                self._clients[authority] = hdfs_native.Client(f"hdfs://{authority}", config=self.hadoop_config())
            except Exception as e:  # noqa: BLE001 - hdfs-native's configuration errors are plain exceptions
                raise ObjectStoreError(f"cannot configure HDFS for hdfs://{authority}: {_first_line(e)}") from None
        return self._clients[authority]

    def _locate(self, path: str) -> tuple[hdfs_native.Client, str]:
        authority, p = _split(path)
        return self._client(authority), p

    def _call(self, op: str, path: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except FileExistsError:
            raise FileAlreadyExistsError(path) from None
        except FileNotFoundError:
            raise FileNotFoundError(2, "No such file", path) from None
        except ObjectStoreError:
            raise
        except Exception as e:  # noqa: BLE001 - hdfs-native reports NameNode errors as RuntimeError
            raise ObjectStoreError(f"cannot {op} {path}: {_first_line(e)}") from None

    def check_location(self, location: str) -> None:
        """Reach ``location``'s NameNode once, so a wrong address is named when a catalog opens
        (hdfs-native itself retries a refused connection for minutes). A name service without a
        port (HA) is left to the client and its configuration."""
        authority, path = _split(location)
        host, _, port = authority.rpartition(":")
        if port.isdigit() and host:
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_TIMEOUT_S):
                    pass
            except OSError as e:
                raise ObjectStoreError(f"cannot reach {location}: the NameNode hdfs://{authority} is unreachable "
                                       f"({e.strerror or e})") from None
        client = self._client(authority)
        try:
            self._call("reach", location, lambda: client.get_file_info(path))
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------------ reads
    def read_bytes(self, path: str) -> bytes:
        client, p = self._locate(path)

        def read() -> bytes:
            with client.read(p) as f:
                return bytes(f.read())
        return self._call("read", path, read)

    def open_read(self, path: str) -> BinaryIO:
        client, p = self._locate(path)
        # a seekable binary file as its readers use it (pyarrow's Parquet reader, json, fastavro)
        return cast(BinaryIO, _Reader(self._call("read", path, lambda: client.read(p)), path))

    def _status(self, path: str) -> hdfs_native.FileStatus:
        client, p = self._locate(path)
        return self._call("read", path, lambda: client.get_file_info(p))

    def exists(self, path: str) -> bool:
        try:
            self._status(path)
            return True
        except FileNotFoundError:
            return False

    def size(self, path: str) -> int:
        return int(self._status(path).length)

    def mtime_ms(self, path: str) -> int:
        return int(self._status(path).modification_time)

    def list_dir(self, path: str) -> list[str]:
        client, p = self._locate(path)
        try:
            listed = self._call("list", path, lambda: list(client.list_status(p)))
        except FileNotFoundError:
            return []
        return sorted(s.path.rstrip("/").rsplit("/", 1)[-1] for s in listed)

    def walk_files(self, path: str) -> Iterator[str]:
        client, p = self._locate(path)
        authority, _ = _split(path)
        try:
            listed = self._call("list", path, lambda: list(client.list_status(p, True)))
        except FileNotFoundError:
            return
        for s in listed:
            if not s.isdir:
                yield f"hdfs://{authority}{s.path}"

    def is_dir(self, path: str) -> bool:
        try:
            return bool(self._status(path).isdir)
        except FileNotFoundError:
            return False

    # ------------------------------------------------------------------ writes
    def makedirs(self, path: str) -> None:
        client, p = self._locate(path)
        self._call("create the directory", path, lambda: client.mkdirs(p, create_parent=True))

    def _create(self, path: str, overwrite: bool) -> hdfs_native.FileWriter:
        import hdfs_native

        client, p = self._locate(path)
        options = hdfs_native.WriteOptions(overwrite=overwrite, create_parent=True)
        return self._call("write", path, lambda: client.create(p, options))

    def write_bytes(self, path: str, data: bytes, overwrite: bool = True) -> None:
        """Write a hidden temporary file beside ``path``, close it, then rename it onto ``path``:
        HDFS's rename is atomic, and without ``overwrite`` it fails when ``path`` exists, which
        raises :class:`FileAlreadyExistsError` (also when another process won the same name)."""
        client, p = self._locate(path)
        directory, name = path.rsplit("/", 1)
        tmp = f"{directory}/.{name}.{uuid.uuid4().hex}.tmp"
        _, tmp_p = _split(tmp)
        try:
            with self._create(tmp, overwrite=False) as out:
                self._call("write", tmp, lambda: out.write(bytes(data)))
            self._call("write", path, lambda: client.rename(tmp_p, p, overwrite))
        except BaseException:
            try:
                client.delete(tmp_p)
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
            raise

    def write_hint(self, path: str, data: bytes) -> None:
        self.write_bytes(path, data, overwrite=True)

    def open_write(self, path: str) -> BinaryIO:
        """A new file for streaming writes (data files: their visibility comes from the commit)."""
        return cast(BinaryIO, self._create(path, overwrite=False))     # a raw binary stream, used as a file

    def rename(self, src: str, dst: str) -> None:
        """HDFS's rename, of a file or a directory; the target's parent is created first."""
        client, s = self._locate(src)
        _, d = _split(dst)
        parent = d.rsplit("/", 1)[0] or "/"
        self._call("create the directory", dst, lambda: client.mkdirs(parent, create_parent=True))
        self._call("rename", src, lambda: client.rename(s, d, False))

    def delete(self, path: str) -> None:
        client, p = self._locate(path)
        try:
            self._call("delete", path, lambda: client.delete(p, False))
        except FileNotFoundError:
            pass

    def delete_tree(self, path: str) -> None:
        client, p = self._locate(path)
        try:
            self._call("delete", path, lambda: client.delete(p, True))
        except FileNotFoundError:
            pass
