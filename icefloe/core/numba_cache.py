# pyright: strict
"""The compiled Avro kernel (``core.avro_kernel``), imported on first use with an on-disk cache
that works wherever the package is installed.

numba keeps a compiled function's machine code next to its module (``__pycache__``) or, where that
is not writable, in the user's cache directory; where neither is (a read-only install run by a user
without a home directory), this points numba at a directory of the system's temporary one, so a
process loads the code a previous one compiled instead of compiling it again (a first-ever run
compiles, once, in a few seconds). ``NUMBA_CACHE_DIR`` set by the user is kept.
"""
from __future__ import annotations

import importlib
import os
import tempfile
import threading
from types import ModuleType
from typing import Optional

_lock = threading.Lock()
_kernel: Optional[ModuleType] = None


def writable(path: str) -> bool:
    """Whether ``path`` is (or can be made) a writable directory."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def cache_dir() -> Optional[str]:
    """The directory numba is to cache the kernel in, or None for numba's own choice (the package's
    ``__pycache__``, or the user's cache directory)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    if writable(here):
        return None
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for candidate in (os.path.join(home, "icefloe", "numba"),
                      os.path.join(tempfile.gettempdir(), f"icefloe-numba-{os.getuid()}")):
        if writable(candidate):
            return candidate
    return None


def kernel() -> ModuleType:
    """``core.avro_kernel``, its functions loaded from the cache (or compiled) on their first call."""
    global _kernel
    if _kernel is not None:
        return _kernel
    with _lock:
        if _kernel is None:
            where = cache_dir()
            if where is not None:
                config = importlib.import_module("numba.core.config")
                setattr(config, "CACHE_DIR", where)      # read when a cached function is first called
            _kernel = importlib.import_module("icefloe.core.avro_kernel")
    return _kernel


def loaded() -> bool:
    """Whether ``kernel`` has been loaded in this process (a caller with a cheaper path for small
    inputs takes the compiled one only where its fixed cost is paid already)."""
    return _kernel is not None


_spans: Optional[ModuleType] = None


def spans() -> ModuleType:
    """``core.avro_spans``, loaded as ``kernel`` loads ``core.avro_kernel`` (its cache directory)."""
    global _spans
    if _spans is None:
        kernel()        # points numba at the cache directory first
        with _lock:
            if _spans is None:
                _spans = importlib.import_module("icefloe.core.avro_spans")
    return _spans
