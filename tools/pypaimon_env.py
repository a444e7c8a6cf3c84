"""pypaimon in its own virtual environment (``.venv-paimon``), reached through proxies.

pypaimon 2.1 requires ``pyarrow<20``; icefloe needs pyarrow 22 or later, the first to read Parquet's
VARIANT annotation. So pypaimon, a referee of the tests and a peer of the benchmark, is installed
beside icefloe (``requirements-paimon.txt``, pinned) and runs in one worker process per test session
or benchmark run. ``remote_module("pypaimon")`` stands for the package: attributes, calls and the
objects they return are proxies (:class:`Remote`) whose work runs in the worker; data comes back by
value (see ``tools/remote_python.py``)::

    from tools.pypaimon_env import remote_module
    pypaimon = remote_module("pypaimon")
    catalog = pypaimon.CatalogFactory.create({"warehouse": path})
    table = catalog.get_table("db.t")              # a proxy
    builder = table.new_read_builder()
    arrow = builder.new_read().to_arrow(builder.new_scan().plan().splits())   # a pyarrow.Table here

``timed(proxy_callable, *args)`` returns the result and the seconds the call took in the worker, for
the benchmark (the pipe's cost left out).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
from pathlib import Path

from tools import remote_python as rp
from tools import venvs

ROOT = Path(__file__).resolve().parent.parent
ENV_DIR = ROOT / ".venv-paimon"
REQUIREMENTS = ROOT / "requirements-paimon.txt"
WORKER = Path(rp.__file__).resolve()


class PypaimonUnavailable(RuntimeError):
    """The environment could not be built or its worker could not start."""


def env_python() -> Path:
    return ENV_DIR / "bin" / "python"


def ensure_env(quiet: bool = True) -> Path:
    """Build ``.venv-paimon`` (once per change of ``requirements-paimon.txt``)."""
    venvs.build(ENV_DIR, REQUIREMENTS, PypaimonUnavailable, quiet)
    return ENV_DIR


class Worker:
    """The worker process and the pipe to it; one request at a time."""

    def __init__(self):
        ensure_env()
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        self._proc = subprocess.Popen([str(env_python()), str(WORKER)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self._lock = threading.Lock()
        self._released: list[int] = []
        try:
            rp.receive(self._proc.stdout)
        except EOFError:
            raise PypaimonUnavailable("the worker did not start:\n" + "".join(self._stderr[-40:])) from None

    def _drain(self) -> None:
        for line in self._proc.stderr:
            self._stderr.append(line.decode(errors="replace"))
            del self._stderr[:-200]

    def release(self, handle: int) -> None:
        self._released.append(handle)

    def request(self, op: str, target=None, *, name: str | None = None, args=(), kwargs=None):
        """Run one operation in the worker: the decoded result and the seconds it took there."""
        message = {"op": op, "name": name}
        if target is not None:
            message["target"] = rp.encode(target, _ref)
            message["args"] = rp.encode(tuple(args), _ref)
            message["kwargs"] = rp.encode(dict(kwargs or {}), _ref)
        with self._lock:
            message["release"], self._released = self._released, []
            try:
                rp.send(self._proc.stdin, message)
                reply = rp.receive(self._proc.stdout)
            except (EOFError, BrokenPipeError):
                raise PypaimonUnavailable("the worker ended:\n" + "".join(self._stderr[-40:])) from None
        if reply[0] == "error":
            raise rp.local_exception(*reply[1:])
        return rp.decode(reply[1], lambda handle: Remote(self, *handle)), reply[2]

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                with self._lock:
                    rp.send(self._proc.stdin, {"op": "stop"})
                self._proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()


def _ref(value):
    if isinstance(value, Remote):
        return (object.__getattribute__(value, "_handle"), "")
    raise TypeError(f"a {type(value).__qualname__} cannot be passed to the worker (not data, not one of its objects)")


class Remote:
    """An object living in the worker. Attribute reads, calls, indexing, ``len``, iteration and
    comparison run there; what comes back is data or another proxy."""

    __slots__ = ("_worker", "_handle", "_type", "__weakref__")

    def __init__(self, worker: Worker, handle: int, type_name: str):
        object.__setattr__(self, "_worker", worker)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type", type_name)

    def _op(self, op: str, *args, **kwargs):
        return object.__getattribute__(self, "_worker").request(op, self, args=args, kwargs=kwargs)[0]

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_worker").request("getattr", self, name=name)[0]

    def __call__(self, *args, **kwargs):
        return self._op("call", *args, **kwargs)

    def __getitem__(self, key):
        return self._op("getitem", key)

    def __len__(self) -> int:
        return self._op("len")

    def __iter__(self):
        return iter(self._op("list"))

    def __contains__(self, item) -> bool:
        return self._op("contains", item)

    def __eq__(self, other) -> bool:
        return self._op("eq", other) if isinstance(other, Remote) or isinstance(other, rp.PLAIN) else NotImplemented

    def __hash__(self) -> int:
        return self._op("hash")

    def __bool__(self) -> bool:
        return self._op("bool")

    def __str__(self) -> str:
        return self._op("str")

    def __repr__(self) -> str:
        return f"<{object.__getattribute__(self, '_type')} in .venv-paimon: {self._op('repr')}>"

    def __enter__(self):
        return self._method("__enter__")()

    def __exit__(self, *exc):
        return self._method("__exit__")(*exc)

    def _method(self, name: str):
        return object.__getattribute__(self, "_worker").request("getattr", self, name=name)[0]

    def __del__(self):
        try:
            object.__getattribute__(self, "_worker").release(object.__getattribute__(self, "_handle"))
        except Exception:  # noqa: BLE001 - at interpreter exit the worker may be gone
            pass


_worker: Worker | None = None
_start = threading.Lock()


def worker() -> Worker:
    """The worker of this process, started on first use and stopped at exit."""
    global _worker
    with _start:
        if _worker is None:
            _worker = Worker()
            atexit.register(_worker.close)
    return _worker


class _LazyModule:
    """A module of the worker, imported on first attribute read (importing this file starts nothing)."""

    def __init__(self, name: str):
        self._name = name
        self._module: Remote | None = None

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._module is None:
            self._module = worker().request("import", name=self._name)[0]
        return getattr(self._module, attr)


def remote_module(name: str):
    """A worker module by its dotted name, e.g. ``remote_module("pypaimon.schema.data_types")``."""
    return _LazyModule(name)


def timed(function: Remote, *args, **kwargs):
    """``function(*args, **kwargs)`` run in the worker: its result and the seconds it took there."""
    return worker().request("call", function, args=args, kwargs=kwargs)


if __name__ == "__main__":
    ensure_env(quiet=False)
    print(ENV_DIR)
