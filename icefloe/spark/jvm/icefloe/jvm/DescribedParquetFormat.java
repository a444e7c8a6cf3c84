package icefloe.jvm;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.CollectionAccumulator;

/**
 * Spark's own Parquet writer, each file described by the task that wrote it.
 *
 * <p>When a writer closes a file, its task reads the file's footer back (the file's last bytes, just
 * written) and adds it, with the file's path and size, to an accumulator of the write (the option
 * {@code icefloe.write-id} names it; {@link #open} registers it on the driver, {@link #take} hands
 * its entries over and forgets it). Spark merges the accumulator updates of the tasks that
 * succeed, once each, so the driver gets one footer per file it will commit and reads no file
 * itself. Without the option, or for an unregistered write, it writes as Spark's Parquet format does.
 */
public class DescribedParquetFormat extends ParquetFileFormat {
  public static final String OPTION = "icefloe.write-id";
  private static final ConcurrentHashMap<String, CollectionAccumulator<byte[]>> WRITES = new ConcurrentHashMap<>();

  @Override
  public String shortName() {
    return "icefloe-described-parquet";
  }

  @Override
  public String toString() {
    return "Parquet (icefloe described files)";
  }

  /** Registers the accumulator of write {@code writeId} (on the driver, before the write). */
  public static void open(SparkSession spark, String writeId) {
    WRITES.put(writeId, spark.sparkContext().collectionAccumulator("icefloe write " + writeId));
  }

  /**
   * The footers of write {@code writeId}, one frame per file (the path's UTF-8 length and bytes, the
   * file's size, the footer's length and bytes; big-endian), and the write forgotten.
   */
  public static byte[] take(String writeId) {
    CollectionAccumulator<byte[]> acc = WRITES.remove(writeId);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (acc != null) {
      List<byte[]> frames = acc.value();
      for (byte[] frame : frames) {
        out.write(frame, 0, frame.length);
      }
    }
    return out.toByteArray();
  }

  @Override
  public OutputWriterFactory prepareWrite(SparkSession spark, Job job,
      scala.collection.immutable.Map<String, String> options, StructType dataSchema) {
    OutputWriterFactory inner = super.prepareWrite(spark, job, options, dataSchema);
    FlatRowWriteSupport.use(job.getConfiguration());
    String writeId = options.get(OPTION).getOrElse(() -> null);
    CollectionAccumulator<byte[]> acc = writeId == null ? null : WRITES.get(writeId);
    if (acc == null) {
      return inner;
    }
    // local files (the staging directory, its files) without a chmod process each ({@link LocalFiles})
    LocalFiles.useFor(FileOutputFormat.getOutputPath(job), job.getConfiguration());
    return new Factory(inner, acc);
  }

  /** A Parquet file's size and footer. */
  static final class Footer {
    final long size;
    final byte[] bytes;

    Footer(long size, byte[] bytes) {
      this.size = size;
      this.bytes = bytes;
    }
  }

  /** The size and footer of the Parquet file at {@code p} (its last bytes). */
  static Footer readFooter(FileSystem fs, Path p) throws IOException {
    long size = fs.getFileStatus(p).getLen();
    try (FSDataInputStream in = fs.open(p)) {
      byte[] tail = new byte[8];
      in.readFully(size - 8, tail);
      int length = (tail[0] & 0xff) | (tail[1] & 0xff) << 8 | (tail[2] & 0xff) << 16 | (tail[3] & 0xff) << 24;
      if (length <= 0 || length > size - 12 || tail[4] != 'P' || tail[5] != 'A' || tail[6] != 'R' || tail[7] != '1') {
        throw new IOException("not a Parquet file: " + p);
      }
      byte[] footer = new byte[length];
      in.readFully(size - 8 - length, footer);
      return new Footer(size, footer);
    }
  }

  private static final class Factory extends OutputWriterFactory {
    private final OutputWriterFactory inner;
    private final CollectionAccumulator<byte[]> footers;

    Factory(OutputWriterFactory inner, CollectionAccumulator<byte[]> footers) {
      this.inner = inner;
      this.footers = footers;
    }

    @Override
    public String getFileExtension(TaskAttemptContext context) {
      return inner.getFileExtension(context);
    }

    @Override
    public OutputWriter newInstance(String path, StructType dataSchema, TaskAttemptContext context) {
      return new Described(inner.newInstance(path, dataSchema, context), path, context, footers);
    }
  }

  private static final class Described extends OutputWriter {
    private final OutputWriter inner;
    private final String path;
    private final TaskAttemptContext context;
    private final CollectionAccumulator<byte[]> footers;

    Described(OutputWriter inner, String path, TaskAttemptContext context, CollectionAccumulator<byte[]> footers) {
      this.inner = inner;
      this.path = path;
      this.context = context;
      this.footers = footers;
    }

    @Override
    public void write(InternalRow row) {
      inner.write(row);
    }

    @Override
    public String path() {
      return inner.path();
    }

    @Override
    public void close() {
      inner.close();
      try {
        footers.add(frame(inner.path()));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read back the footer of " + inner.path(), e);
      }
    }

    private byte[] frame(String written) throws IOException {
      Path p = new Path(written);
      Footer got = readFooter(p.getFileSystem(context.getConfiguration()), p);
      long size = got.size;
      byte[] footer = got.bytes;
      byte[] name = written.getBytes(StandardCharsets.UTF_8);
      ByteArrayOutputStream buf = new ByteArrayOutputStream(footer.length + name.length + 16);
      DataOutputStream out = new DataOutputStream(buf);
      out.writeInt(name.length);
      out.write(name);
      out.writeLong(size);
      out.writeInt(footer.length);
      out.write(footer);
      out.flush();
      return buf.toByteArray();
    }
  }
}
