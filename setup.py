"""Packaging step beyond pyproject.toml: the wheel ships icefloe's JVM extension compiled.

``build_py`` compiles the Java sources of ``icefloe/spark/jvm`` against the pyspark of the building
environment into ``icefloe/spark/jvm/icefloe-jvm-<digest>.jar`` (the digest names the Spark version and
the sources, ``icefloe.spark.javac.extension_jar_name``), so that an installed icefloe needs a Java
runtime, not a JDK. pyspark is too large to be a build requirement: build in an environment that has
it (``make wheel``: ``pip wheel --no-build-isolation``). Without pyspark or ``javac`` the package is
built without the jar and icefloe compiles it on first use where a JDK is present (else it takes its
slower paths and says so). An editable install (``pip install -e .``) puts the jar beside the sources.
"""
import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _javac():
    """icefloe/spark/javac.py on its own (standard library only): icefloe is not importable yet."""
    spec = importlib.util.spec_from_file_location("_icefloe_javac", HERE / "icefloe" / "spark" / "javac.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithJar(build_py):
    def run(self):
        super().run()
        javac = _javac()
        root = HERE / "icefloe" / "spark" / "jvm"
        target = root if getattr(self, "editable_mode", False) else Path(self.build_lib) / "icefloe" / "spark" / "jvm"
        try:
            jar = javac.build_extension_jar(target, root)
        except (javac.JavacError, OSError) as e:
            print(f"icefloe: the JVM extension's jar is not in this build ({e}); "
                  "icefloe compiles it on first use where a JDK is present", file=sys.stderr)
            return
        print(f"icefloe: built {jar}", file=sys.stderr)


setup(cmdclass={"build_py": BuildPyWithJar})
