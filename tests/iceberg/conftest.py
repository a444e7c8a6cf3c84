"""Fixtures of the Iceberg tests: the Java runtimes the interop modules share."""
import pytest


@pytest.fixture(scope="session")
def iceberg_runtime():
    """``iceberg_runtime(version, warehouse)``: Apache Iceberg's Java runtime of ``version`` (None: the
    default referee) with its ``jvm`` catalog over ``warehouse``. One JVM per version serves every module
    that asks (each with a warehouse of its own, ``JvmRuntime.use_warehouse``) instead of one each."""
    from tools.jvm_runtime import JvmRuntime

    started: dict = {}

    def runtime(version, warehouse):
        if version not in started:
            started[version] = JvmRuntime(warehouse, iceberg_version=version)
            return started[version]
        return started[version].use_warehouse(warehouse)

    yield runtime
    for jvm in started.values():
        jvm.close()
