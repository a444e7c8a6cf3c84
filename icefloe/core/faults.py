"""A FileIO that fails or kills the process at a chosen mutating operation (for tests).

Every write, streaming write, rename and delete is counted; when the count
reaches ``fail_at`` the operation raises :class:`InjectedFault` (``mode="raise"``)
or the process exits at once without cleanup (``mode="kill"``), as a crash would.
"""
from __future__ import annotations

import os
from typing import BinaryIO, Optional

from icefloe.core.io import FileIO
from icefloe.errors import InjectedFault  # noqa: F401 - defined in icefloe.errors, importable here too


class FaultInjectingFileIO(FileIO):
    def __init__(self, fail_at: Optional[int] = None, mode: str = "raise", task_fault: Optional[str] = None):
        self.task_fault = task_fault       # tasks fail writing a file whose name holds this text
        self.fail_at = fail_at
        self.mode = mode
        self.count = 0
        self.log: list[tuple[str, str]] = []

    def for_tasks(self) -> FileIO:
        """Tasks write through a plain FileIO (the count of operations is the driver's), which
        fails writing files named like ``task_fault`` if that is set."""
        return TaskFaultFileIO(self.task_fault) if self.task_fault else FileIO()

    def _tick(self, op: str, path: str) -> None:
        self.count += 1
        self.log.append((op, path))
        if self.fail_at is not None and self.count == self.fail_at:
            if self.mode == "kill":
                os._exit(137)
            raise InjectedFault(f"injected fault at operation {self.count}: {op} {path}")

    def write_bytes(self, path: str, data: bytes, overwrite: bool = True) -> None:
        self._tick("write", path)
        return super().write_bytes(path, data, overwrite)

    def write_hint(self, path: str, data: bytes) -> None:
        self._tick("write", path)
        return super().write_hint(path, data)

    def open_write(self, path: str) -> BinaryIO:
        self._tick("write", path)
        return super().open_write(path)

    def rename(self, src: str, dst: str) -> None:
        self._tick("rename", dst)
        return super().rename(src, dst)

    def delete(self, path: str) -> None:
        self._tick("delete", path)
        return super().delete(path)


class TaskFaultFileIO(FileIO):
    """The FileIO of Spark tasks in a fault test: writing a file whose name holds ``text`` fails."""

    def __init__(self, text: str):
        self.text = text

    def open_write(self, path: str) -> BinaryIO:
        if self.text in os.path.basename(path):
            raise InjectedFault(f"injected fault in a task: write {path}")
        return super().open_write(path)

    def write_bytes(self, path: str, data: bytes, overwrite: bool = True) -> None:
        if self.text in os.path.basename(path):
            raise InjectedFault(f"injected fault in a task: write {path}")
        return super().write_bytes(path, data, overwrite)
