"""File I/O on object stores (``s3://``, ``gs://``, ``az://`` / ``abfs://``) through obstore.

An object store has no directories and no rename, but S3 (and GCS and Azure) can create an
object *only if it does not exist yet* (``If-None-Match: *``), which is the one primitive a
commit needs: ``vN.metadata.json`` (Iceberg) and ``snapshot-N`` (Paimon) are put that way, so
two writers never both win, with no lock service. A single PUT is atomic, so a reader never
sees half an object.

Configuration uses pyiceberg's property names where they exist: ``s3.endpoint``,
``s3.access-key-id``, ``s3.secret-access-key``, ``s3.session-token``, ``s3.region``,
``s3.path-style-access``, ``s3.anonymous``; ``gcs.service.host``, ``gcs.oauth2.token``;
``adls.account-name``, ``adls.account-key``, ``adls.sas-token``, ``adls.token``,
``adls.client-id``, ``adls.client-secret``, ``adls.tenant-id``, ``adls.connection-string``,
``adls.blob-storage-authority``, ``adls.blob-storage-scheme``, ``adls.account-host``,
``adls.anon``. icefloe adds ``gcs.service-account-path``, ``gcs.anonymous`` and
``s3.credentials`` / ``gcs.credentials`` / ``adls.credentials`` (``instance``: the machine's own
identity). obstore's own configuration keys (``aws_...``, ``google_...``, ``azure_...``) pass
through for everything else. Secrets are kept out of ``repr`` and of every error message.
"""
from __future__ import annotations

import datetime
import io as _io
import ipaddress
import json
import os
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, Mapping, Optional, Sequence, TypeVar, cast
from urllib.parse import urlparse

from icefloe.core.hdfs_io import SCHEMES as HDFS_SCHEMES
from icefloe.core.hdfs_io import HdfsIO, is_hdfs
from icefloe.core.io import LOCAL, FileIO, is_remote
from icefloe.errors import FileAlreadyExistsError, ObjectStoreError

if TYPE_CHECKING:       # the configurations are TypedDicts of obstore's stubs, not importable at run time
    from obstore._list import ListResult, ListStream, ObjectMeta  # pyright: ignore[reportMissingModuleSource]  (obstore ships this module as stubs only)
    from obstore.store import AzureConfig, ClientConfig, GCSConfig, ObjectStore, RetryConfig, S3Config  # noqa: F401

T = TypeVar("T")

SCHEMES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gcs", "gcs": "gcs",
           "az": "azure", "abfs": "azure", "abfss": "azure", "adl": "azure"}

_S3_PROPERTIES = {          # pyiceberg's names -> obstore's S3 configuration keys
    "s3.endpoint": "endpoint",
    "s3.access-key-id": "access_key_id",
    "s3.secret-access-key": "secret_access_key",
    "s3.session-token": "session_token",
    "s3.region": "region",
}
_ADLS_PROPERTIES = {        # pyiceberg's names -> obstore's Azure configuration keys
    "adls.account-name": "azure_storage_account_name",
    "adls.account-key": "azure_storage_account_key",
    "adls.sas-token": "azure_storage_sas_key",
    "adls.token": "azure_storage_token",
    "adls.client-id": "azure_storage_client_id",
    "adls.client-secret": "azure_storage_client_secret",
    "adls.tenant-id": "azure_storage_tenant_id",
}
_CONNECTION_STRING = {"AccountName": "azure_storage_account_name", "AccountKey": "azure_storage_account_key",
                      "SharedAccessSignature": "azure_storage_sas_key", "BlobEndpoint": "azure_storage_endpoint"}
_SECRET_WORDS = ("secret", "token", "password", "key", "credential", "sas", "connection-string")
_CHUNK = 1000


def is_object_store(location: str) -> bool:
    """Whether ``location`` is a URI of an object store icefloe reaches through obstore."""
    scheme = urlparse(location).scheme.lower() if "://" in location else ""
    return scheme in SCHEMES


def _split(path: str) -> tuple[str, str, str]:
    """``s3://bucket/a/b`` -> ("s3", "bucket", "a/b")."""
    p = urlparse(path)
    return p.scheme.lower(), p.netloc, p.path.lstrip("/")


def _missing_bucket(e: Exception) -> bool:
    """Whether an error says the bucket (S3, GCS) or container (Azure) does not exist."""
    return any(code in str(e) for code in ("NoSuchBucket", "ContainerNotFound"))


def _is_secret(name: str) -> bool:
    n = name.lower()
    return any(w in n for w in _SECRET_WORDS) and not n.endswith(("key-id", "key_id"))


class _Reader(_io.RawIOBase):
    """A seekable file over an object (what pyarrow's Parquet reader needs), read in ranges."""

    def __init__(self, store: ObjectStore, key: str, path: str):
        import obstore

        self._path = path
        self._file = obstore.open_reader(store, key, buffer_size=1024 * 1024)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:     # a writable buffer (bytearray, memoryview)
        data = self._file.read(len(buffer))
        n = len(data)
        buffer[:n] = memoryview(data)
        return n

    def read(self, size: Optional[int] = -1) -> bytes:
        return bytes(self._file.read() if size is None or size < 0 else self._file.read(size))

    def readall(self) -> bytes:
        return bytes(self._file.read())

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def size(self) -> int:
        return self._file.size

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


class _Upload(_io.BytesIO):
    """A new object written whole: buffered, then put on ``close`` (never visible half-written;
    ``abort`` or an exception inside ``with`` puts nothing)."""

    def __init__(self, owner: "ObjectStoreIO", path: str):
        super().__init__()
        self._owner = owner
        self._path = path
        self._done = False

    def abort(self) -> None:
        self._done = True

    def close(self) -> None:
        if not self._done and not self.closed:
            self._done = True
            self._owner.write_bytes(self._path, self.getvalue(), overwrite=False)
        super().close()

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if exc_type is not None:
            self.abort()
        return super().__exit__(exc_type, exc, tb)


class ObjectStoreIO(FileIO):
    """I/O on object stores; paths are full URIs (``s3://bucket/key``). Pickles without its
    client connections, so Spark tasks rebuild them from the same configuration."""

    parallel_reads = 16
    keeps_empty_dirs = False

    def __init__(self, properties: Optional[Mapping[str, object]] = None):
        self.properties = {str(k): str(v) for k, v in (properties or {}).items() if v is not None}
        self._stores: dict[tuple[str, str], ObjectStore] = {}

    @property
    def spark_native(self) -> bool:
        """Spark's own Parquet reader and writer take these paths only when the user says the
        session has the store's Hadoop connector (``spark.native-io=true``); otherwise data goes
        through Python tasks with this I/O."""
        return self.properties.get("spark.native-io", "false").lower() == "true"

    def __repr__(self) -> str:
        shown = {k: ("***" if _is_secret(k) else v) for k, v in self.properties.items()}
        return f"ObjectStoreIO({shown})"

    def __getstate__(self) -> dict[str, dict[str, str]]:
        return {"properties": self.properties}

    def __setstate__(self, state: dict[str, dict[str, str]]) -> None:
        self.properties = state["properties"]
        self._stores = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectStoreIO) and other.properties == self.properties

    __hash__ = None  # pyright: ignore[reportAssignmentType]  (unhashable: a mutable configuration)

    # ------------------------------------------------------------------ stores
    def _store(self, scheme: str, bucket: str) -> ObjectStore:
        key = (scheme, bucket)
        if key not in self._stores:
            self._stores[key] = self._make_store(scheme, bucket)
        return self._stores[key]

    def _make_store(self, scheme: str, bucket: str) -> ObjectStore:
        from obstore.exceptions import BaseError
        from obstore.store import AzureStore, GCSStore, S3Store

        kind = SCHEMES.get(scheme)
        if kind is None:
            raise ObjectStoreError(f"unsupported URI scheme {scheme!r}; icefloe reaches "
                                   f"{', '.join(sorted(SCHEMES))} and the local file system")
        if not bucket:
            raise ObjectStoreError(f"a {scheme}:// location needs a bucket: {scheme}://<bucket>/<path>")
        raw = {k: v for k, v in self.properties.items() if "." not in k and "-" not in k}
        retry: "RetryConfig" = {"max_retries": int(self.properties.get("io.max-retries", "3")),
                 "retry_timeout": datetime.timedelta(seconds=float(self.properties.get("io.retry-timeout-s", "20")))}
        client: "ClientConfig" = {"connect_timeout": self.properties.get("io.connect-timeout", "5s"),
                  "timeout": self.properties.get("io.request-timeout", "120s")}
        if kind == "s3":
            conf: dict[str, Any] = {obstore_key: self.properties[name] for name, obstore_key in _S3_PROPERTIES.items()
                    if name in self.properties}
            for name in ("endpoint", "access_key_id", "secret_access_key", "session_token", "region"):
                env = os.environ.get({"endpoint": "AWS_ENDPOINT_URL"}.get(name, "AWS_" + name.upper()))
                if name not in conf and env:
                    conf[name] = env
            if "region" not in conf:
                conf["region"] = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
            anonymous = self.properties.get("s3.anonymous", "false").lower() == "true"
            if anonymous:
                conf["skip_signature"] = True
            elif not ("access_key_id" in conf and "secret_access_key" in conf) and not any(
                    os.environ.get(v) for v in ("AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                                                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) \
                    and self.properties.get("s3.credentials", "") != "instance":
                raise ObjectStoreError(
                    f"no credentials for {scheme}://{bucket}: set s3.access-key-id and s3.secret-access-key "
                    "(or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), s3.anonymous=true for a public bucket, "
                    "or s3.credentials=instance to use the machine's instance role")
            endpoint = conf.get("endpoint", "")
            if endpoint.startswith("http://"):
                client["allow_http"] = True
            path_style = self.properties.get("s3.path-style-access", "true" if endpoint else "false")
            conf["virtual_hosted_style_request"] = path_style.lower() != "true"
            conf.update({k: v for k, v in raw.items() if k.startswith("aws_")})
            # the keys come from the catalog's properties (and aws_* names passed through): obstore checks them
            return S3Store(bucket, config=cast("S3Config", conf), client_options=client, retry_config=retry)
        try:
            if kind == "gcs":
                return GCSStore(bucket, config=cast("GCSConfig", _gcs_config(self.properties, raw, scheme, bucket, client)),
                                client_options=client, retry_config=retry)
            return AzureStore(bucket.split("@", 1)[0],
                              config=cast("AzureConfig", _azure_config(self.properties, raw, scheme, bucket, client)), client_options=client,
                              retry_config=retry)
        except BaseError as e:
            raise self._error(e, "configure the store for", f"{scheme}://{bucket}") from None

    def _locate(self, path: str) -> tuple[ObjectStore, str]:
        scheme, bucket, key = _split(path)
        return self._store(scheme, bucket), key

    def _error(self, e: Exception, op: str, path: str) -> Exception:
        """An obstore error as an icefloe error: its first line, with no configuration in it."""
        first = str(e).split("\n", 1)[0]
        secrets = [v for k, v in self.properties.items() if _is_secret(k) and v]
        secrets += [part.partition("=")[2] for part in self.properties.get("adls.connection-string", "").split(";")
                    if part.partition("=")[0].strip() in ("AccountKey", "SharedAccessSignature")]
        for v in secrets:
            if v:
                first = first.replace(v, "***")
        if _missing_bucket(e):
            what = "container" if SCHEMES.get(_split(path)[0]) == "azure" else "bucket"
            return ObjectStoreError(f"cannot {op} {path}: the {what} {_split(path)[1].split('@', 1)[0]!r} "
                                    "does not exist")
        name = type(e).__name__
        if name in ("UnauthenticatedError", "PermissionDeniedError"):
            return ObjectStoreError(f"cannot {op} {path}: access denied ({first})")
        if "error sending request" in first or "Connection refused" in str(e) or "dns error" in str(e):
            setting = {"s3": "s3.endpoint", "gcs": "gcs.service.host",
                       "azure": "adls.blob-storage-authority"}.get(SCHEMES.get(_split(path)[0], ""), "")
            endpoint = self.properties.get(setting, "the store's endpoint")
            return ObjectStoreError(f"cannot {op} {path}: {endpoint} is unreachable ({first})")
        return ObjectStoreError(f"cannot {op} {path}: {first}")

    def _call(self, op: str, path: str, fn: Callable[[], T]) -> T:
        from obstore.exceptions import AlreadyExistsError, BaseError

        try:
            return fn()
        except AlreadyExistsError:
            raise FileAlreadyExistsError(path) from None
        except FileNotFoundError as e:
            if _missing_bucket(e):
                raise self._error(e, op, path) from None
            raise FileNotFoundError(2, "No such object", path) from None
        except BaseError as e:
            raise self._error(e, op, path) from None
        except OSError as e:   # obstore reports transport failures as OSError subclasses too
            raise self._error(e, op, path) from None

    def check_location(self, location: str) -> None:
        """Reach ``location``'s bucket once (a listing of one object), so a bad endpoint, bucket or
        credentials is named when a catalog opens rather than at its first commit."""
        store, key = self._locate(location)
        prefix = key.rstrip("/") + "/" if key else None

        def probe() -> None:
            next(_chunks(_list(store, prefix, chunk_size=1)), None)
        self._call("reach", location, probe)

    # ------------------------------------------------------------------ reads
    def read_bytes(self, path: str) -> bytes:
        import obstore

        store, key = self._locate(path)
        return self._call("read", path, lambda: bytes(obstore.get(store, key).bytes()))

    def open_read(self, path: str) -> BinaryIO:
        store, key = self._locate(path)
        # a seekable binary file as its readers use it (pyarrow's Parquet reader, json, fastavro)
        return cast(BinaryIO, self._call("read", path, lambda: _Reader(store, key, path)))

    def _head(self, path: str) -> ObjectMeta:
        import obstore

        store, key = self._locate(path)
        return self._call("read", path, lambda: obstore.head(store, key))

    def exists(self, path: str) -> bool:
        """Whether the object ``path`` exists (one HEAD request; a prefix is ``is_dir``)."""
        try:
            self._head(path)
            return True
        except FileNotFoundError:
            return False

    def size(self, path: str) -> int:
        return int(self._head(path)["size"])

    def mtime_ms(self, path: str) -> int:
        return int(self._head(path)["last_modified"].timestamp() * 1000)

    def list_dir(self, path: str) -> list[str]:
        store, key = self._locate(path)
        prefix = key.rstrip("/") + "/" if key.rstrip("/") else None
        listed = self._call("list", path, lambda: _list_with_delimiter(store, prefix))
        names = {p.rstrip("/").rsplit("/", 1)[-1] for p in listed["common_prefixes"]}
        names |= {o["path"].rsplit("/", 1)[-1] for o in listed["objects"]}
        return sorted(n for n in names if n)

    def _keys(self, path: str) -> Iterator[str]:
        store, key = self._locate(path)
        prefix = key.rstrip("/") + "/" if key.rstrip("/") else None
        stream = self._call("list", path, lambda: _list(store, prefix, chunk_size=_CHUNK))
        it = _chunks(stream)
        while True:
            chunk = self._call("list", path, lambda: next(it, None))
            if chunk is None:
                return
            for o in chunk:
                yield o["path"]

    def walk_files(self, path: str) -> Iterator[str]:
        scheme, bucket, _key = _split(path)
        for k in self._keys(path):
            yield f"{scheme}://{bucket}/{k}"

    def is_dir(self, path: str) -> bool:
        return next(self._keys(path), None) is not None

    # ------------------------------------------------------------------ writes
    def makedirs(self, path: str) -> None:
        """Nothing to do: a prefix exists once an object is under it."""

    def write_bytes(self, path: str, data: bytes, overwrite: bool = True) -> None:
        """One PUT, so the object appears whole or not at all; ``overwrite=False`` puts it only if
        absent (``If-None-Match: *``) and raises ``FileAlreadyExistsError`` otherwise."""
        import obstore

        store, key = self._locate(path)
        self._call("write", path, lambda: obstore.put(store, key, bytes(data),
                                                      mode="overwrite" if overwrite else "create"))

    def write_hint(self, path: str, data: bytes) -> None:
        self.write_bytes(path, data, overwrite=True)

    def open_write(self, path: str) -> BinaryIO:
        return _Upload(self, path)

    def rename(self, src: str, dst: str) -> None:
        """Copy then delete (object stores cannot rename): of one object, or of every object under
        a prefix. Not atomic; commits never rely on it."""
        import obstore

        try:
            self._head(src)
            pairs = [(src, dst)]
        except FileNotFoundError:
            base = src.rstrip("/")
            pairs = [(p, dst.rstrip("/") + p[len(base):]) for p in self.walk_files(base)]
            if not pairs:
                raise FileNotFoundError(2, "No such object", src) from None
        for s, d in pairs:
            store, skey = self._locate(s)
            _dstore, dkey = self._locate(d)
            self._call("copy", s, lambda: obstore.copy(store, skey, dkey))
            self._call("delete", s, lambda: obstore.delete(store, skey))

    def delete(self, path: str) -> None:
        import obstore

        store, key = self._locate(path)
        try:
            self._call("delete", path, lambda: obstore.delete(store, key))
        except FileNotFoundError:
            pass

    def delete_tree(self, path: str) -> None:
        import obstore

        store, _key = self._locate(path)
        keys = list(self._keys(path))
        for i in range(0, len(keys), _CHUNK):
            batch = keys[i:i + _CHUNK]
            self._call("delete", path, lambda: obstore.delete(store, batch))


# obstore's overloads that return Arrow data name arro3's types, not installed here (Unknown to a
# checker): these two call the overloads that return dicts of each object, the only ones used
def _list(store: ObjectStore, prefix: Optional[str], chunk_size: int) -> ListStream[Sequence[ObjectMeta]]:
    import obstore

    return obstore.list(store, prefix, chunk_size=chunk_size)  # pyright: ignore[reportUnknownMemberType]


def _chunks(stream: ListStream[Sequence[ObjectMeta]]) -> Iterator[Sequence[ObjectMeta]]:
    # obstore's stub types ListStream.__iter__ with typing.Self, which Python 3.10's typing lacks
    return cast("Iterator[Sequence[ObjectMeta]]", iter(stream))


def _list_with_delimiter(store: ObjectStore, prefix: Optional[str]) -> ListResult[Sequence[ObjectMeta]]:
    import obstore

    return obstore.list_with_delimiter(store, prefix)  # pyright: ignore[reportUnknownMemberType]


def _instance(props: Mapping[str, str], prefix: str) -> bool:
    return props.get(f"{prefix}.credentials", "") == "instance"


def _gcs_config(props: Mapping[str, str], raw: Mapping[str, str], scheme: str, bucket: str,
                client: ClientConfig) -> dict[str, str]:
    """obstore's GCS configuration from pyiceberg's names: ``gcs.service.host`` (the endpoint, e.g.
    an emulator's ``http://127.0.0.1:4443``), ``gcs.oauth2.token`` (a bearer token), and icefloe's
    ``gcs.service-account-path``, ``gcs.anonymous`` (no credentials: a public bucket or an emulator;
    ``gcs.oauth2.token=anon`` says the same, as in gcsfs) and ``gcs.credentials=instance``."""
    conf: dict[str, str] = {}
    host = props.get("gcs.service.host", "").rstrip("/")
    if host:
        conf["google_base_url"] = host
        if host.startswith("http://"):
            client["allow_http"] = True
    token = props.get("gcs.oauth2.token", "")
    if props.get("gcs.anonymous", "false").lower() == "true" or token == "anon":
        # obstore's documented way to send no credentials at all on every request
        conf["google_service_account_key"] = json.dumps({
            "gcs_base_url": host or "https://storage.googleapis.com", "disable_oauth": True,
            "client_email": "", "private_key": "", "private_key_id": ""})
    elif token:
        conf["google_bearer_token"] = token
    if "gcs.service-account-path" in props:
        conf["google_service_account"] = props["gcs.service-account-path"]
    conf.update({k: v for k, v in raw.items() if k.startswith("google_")})
    auth = ("google_bearer_token", "google_service_account", "google_service_account_key",
            "google_service_account_path", "google_application_credentials")
    env = ("GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH", "GOOGLE_SERVICE_ACCOUNT_KEY",
           "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_BEARER_TOKEN")
    adc = os.path.join(os.path.expanduser("~"), ".config", "gcloud", "application_default_credentials.json")
    if not (any(k in conf for k in auth) or any(os.environ.get(v) for v in env) or os.path.exists(adc)
            or _instance(props, "gcs")):
        raise ObjectStoreError(
            f"no credentials for {scheme}://{bucket}: set gcs.oauth2.token or gcs.service-account-path (or "
            "GOOGLE_APPLICATION_CREDENTIALS), gcs.anonymous=true for a public bucket or an emulator, or "
            "gcs.credentials=instance to use the machine's service account")
    return conf


def _azure_endpoint(props: Mapping[str, str], account: str) -> Optional[str]:
    """The blob endpoint from pyiceberg's ``adls.blob-storage-authority`` (``host[:port]``) and
    ``adls.blob-storage-scheme``, or ``adls.account-host``. An authority on an IP address or
    localhost is an emulator (Azurite), whose URLs carry the account as the first path segment."""
    authority = props.get("adls.blob-storage-authority", "")
    if authority:
        scheme = props.get("adls.blob-storage-scheme", "https")
        host = urlparse("//" + authority).hostname or ""
        try:
            local = host == "localhost" or bool(ipaddress.ip_address(host))
        except ValueError:
            local = False
        return f"{scheme}://{authority}/{account}" if local else f"{scheme}://{account}.{authority}"
    host = props.get("adls.account-host", "")
    if host:
        return host if "://" in host else f"https://{host}"
    return None


def _azure_config(props: Mapping[str, str], raw: Mapping[str, str], scheme: str, bucket: str,
                  client: ClientConfig) -> dict[str, str]:
    """obstore's Azure configuration from pyiceberg's ``adls.*`` names; the account also comes from
    an ``abfs://container@account.dfs.core.windows.net/`` location."""
    conf: dict[str, str] = {}
    for part in props.get("adls.connection-string", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name in _CONNECTION_STRING and value:
            conf[_CONNECTION_STRING[name]] = value
        elif name == "UseDevelopmentStorage" and value.lower() == "true":
            conf["azure_storage_use_emulator"] = "true"
    conf.update({key: props[name] for name, key in _ADLS_PROPERTIES.items() if name in props})
    if "@" in bucket and "azure_storage_account_name" not in conf:
        conf["azure_storage_account_name"] = bucket.split("@", 1)[1].split(".", 1)[0]
    account = conf.get("azure_storage_account_name") or os.environ.get("AZURE_STORAGE_ACCOUNT_NAME", "")
    endpoint = _azure_endpoint(props, account)
    if endpoint:
        conf["azure_storage_endpoint"] = endpoint
    if props.get("adls.anon", "false").lower() == "true":
        conf["azure_skip_signature"] = "true"
    conf.update({k: v for k, v in raw.items() if k.startswith("azure_")})
    if conf.get("azure_storage_endpoint", "").startswith("http://"):
        client["allow_http"] = True
    emulator = str(conf.get("azure_storage_use_emulator", "")).lower() == "true"
    if not (account or emulator):
        raise ObjectStoreError(f"no storage account for {scheme}://{bucket}: set adls.account-name, or use "
                               "abfs://<container>@<account>.dfs.core.windows.net/<path>")
    auth = ("azure_storage_account_key", "azure_storage_sas_key", "azure_storage_token",
            "azure_storage_client_secret", "azure_skip_signature", "azure_federated_token_file",
            "azure_use_azure_cli")
    env = ("AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_TOKEN",
           "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE")
    if not (emulator or any(k in conf for k in auth) or any(os.environ.get(v) for v in env)
            or _instance(props, "adls")):
        raise ObjectStoreError(
            f"no credentials for {scheme}://{bucket}: set adls.account-key, adls.sas-token, adls.token, "
            "adls.client-id with adls.client-secret and adls.tenant-id, or adls.connection-string; adls.anon=true "
            "for a public container, or adls.credentials=instance to use the machine's managed identity")
    return conf


def file_io_for(location: str, properties: Optional[Mapping[str, object]] = None) -> FileIO:
    """The FileIO for ``location``: the local file system, HDFS (``hdfs://``, Hadoop's keys among
    ``properties``), or an object store (``s3://``, ``gs://``, ``az://``/``abfs://``) configured by
    ``properties`` (pyiceberg's names)."""
    if not is_remote(location):
        return LOCAL
    if is_hdfs(location):
        return HdfsIO(properties)
    scheme = location.split("://", 1)[0].lower()
    if scheme not in SCHEMES:
        raise ObjectStoreError(f"unsupported location {location!r}: icefloe reaches the local file system "
                               f"and the schemes {', '.join(sorted([*SCHEMES, *HDFS_SCHEMES]))}")
    return ObjectStoreIO(properties)
