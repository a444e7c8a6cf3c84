"""A streaming job the crash tests start and kill: every Parquet file of an input folder
into an icefloe table, one file per micro-batch, until the folder is read.

    python -m tests.streaming.stream_job INPUT LOCATION CHECKPOINT FORMAT
"""
import os
import sys


def main(argv):
    src, location, checkpoint, fmt = argv
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("ICEFLOE_SPARK_MASTER", "local[2]")
    from icefloe.spark.session import get_spark

    spark = get_spark()
    stream = spark.readStream.schema("id long, v string").option("maxFilesPerTrigger", 1).parquet(src)
    q = (stream.writeStream.format("icefloe").option("format", fmt).option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start(location))
    q.awaitTermination()
    print("stream done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
