"""The settings the embedded local session is started with."""


def test_driver_heap_is_committed_at_its_full_size(spark):
    """The heap starts at ``spark.driver.memory`` (``-Xms``), so a full collection cannot hand
    most of it back and leave the next scan to grow it again."""
    runtime = spark._jvm.java.lang.Runtime.getRuntime()
    spark._jvm.java.lang.System.gc()
    # G1 reports a max a region or so under -Xmx; committed must still be the whole of it after a full GC
    assert runtime.totalMemory() >= 0.95 * runtime.maxMemory()
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions")
    assert f"-Xms{spark.sparkContext.getConf().get('spark.driver.memory')}" in options.split()
