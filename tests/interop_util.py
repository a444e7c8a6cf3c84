"""Helpers to open our tables with the independent readers (pyiceberg, DuckDB, the JVM runtime)."""
import glob
import os

# The start of a snippet run in the JVM runtime's worker (``JvmRuntime.run``): ``t`` is the Iceberg
# table at ``location``, loaded through Iceberg's Java API, ``jvm`` the py4j gateway's JVM view.
JVM_LOAD_TABLE = """
jvm = spark._jvm
t = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(location)
"""


def duckdb_connection():
    import duckdb
    import duckdb_extension_avro
    import duckdb_extension_iceberg

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    for mod, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
        path = glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "*", f"{name}.duckdb_extension"))[0]
        con.execute(f"LOAD '{path}'")
    return con


def pyiceberg_table(metadata_location):
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata_location)
