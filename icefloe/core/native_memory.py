"""Large native buffers given back to the system when freed (glibc's allocator).

A cold plan of a large Iceberg table decodes its manifests (``core.avro_columns``) into Arrow buffers of a few
hundred kilobytes to a few megabytes each, held by the manifest cache and freed when it lets them go.
glibc serves such a buffer from a fresh mapping only while it is larger than its mmap threshold, and
raises that threshold to the size of each mapped buffer freed: after the first manifests are freed,
the next ones' buffers come from the heap, and freed heap memory mostly stays with the process. A
plan of 1M files peaked at 998 MiB with the threshold moving and about 800 MiB with it held at 256 KiB
(three plans of one process, the cache cleared before each). ``hold_mmap_threshold`` holds it
(``mallopt(M_MMAP_THRESHOLD)``, which also stops the moving); elsewhere than glibc it does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

_M_MMAP_THRESHOLD = -3          # glibc's malloc.h
MMAP_THRESHOLD = 256 * 1024

_lock = threading.Lock()
_done = False


def hold_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """Hold glibc's mmap threshold at ``size`` bytes for this process (once; later calls do
    nothing). Whether it is held: False where the C library is not glibc."""
    global _done
    with _lock:
        if _done:
            return True
        if not sys.platform.startswith("linux"):
            return False
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            mallopt = libc.mallopt
            libc.gnu_get_libc_version  # noqa: B018 -- glibc only (musl has no mallopt threshold)
        except (OSError, AttributeError):
            return False
        mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        mallopt.restype = ctypes.c_int
        _done = mallopt(_M_MMAP_THRESHOLD, size) == 1
        return _done


__all__ = ["MMAP_THRESHOLD", "hold_mmap_threshold"]
