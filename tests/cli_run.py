"""The ``icefloe`` command run in the test process: ``icefloe.cli.main`` (the console script's entry,
with its exit codes and one-line errors) on the given arguments, standard output and error captured
apart, as a subprocess would give them. A new Python process adds nothing to these tests but its start
(the console script itself runs as a real process in tests/cli/test_cli_scripts.py and
test_cli_commands.py::test_errors_are_one_line_and_verbose_shows_the_trace).

``spark=False``: the command must not use Spark; any call of icefloe's ``get_spark`` fails the run
(a subprocess could only show that a command finished, not that it never asked for Spark).
"""
from __future__ import annotations

import sys
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Optional
from unittest import mock


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def _no_spark(*_args, **_kwargs):
    raise AssertionError("this command must not use Spark")


def icefloe_here(*args: str, stdin: Optional[str] = None, env: Optional[dict] = None, spark: bool = True) -> Ran:
    from click.testing import CliRunner

    from icefloe.cli import main
    from icefloe.spark import session

    with ExitStack() as stack:
        if not spark:
            original = session.get_spark
            for module in [m for name, m in sys.modules.items() if name.startswith("icefloe") and m is not None]:
                if getattr(module, "get_spark", None) is original:
                    stack.enter_context(mock.patch.object(module, "get_spark", _no_spark))
        out, err, _ = stack.enter_context(CliRunner().isolation(input=stdin, env=env))
        try:
            main(list(args))
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return Ran(code, out.getvalue().decode(), err.getvalue().decode())
