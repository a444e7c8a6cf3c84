package icefloe.jvm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The deleted positions of one data file, read in the task that reads the file, from where a table
 * format keeps them: an Iceberg position delete file (Parquet rows of {@code file_path}, {@code pos},
 * the columns the spec names; only the rows naming the data file count; read by Spark's vectorized reader),
 * an Iceberg {@code deletion-vector-v1} blob of a Puffin file, or a Paimon deletion vector in an
 * index file. Each source is one line of the {@code icefloe.deleted-rows-in} option:
 * {@code data-file TAB kind TAB file TAB offset TAB length}. A source that cannot be read fails the
 * task with an error naming the file and what is wrong with it: rows are never kept by mistake.
 */
final class DeleteSources {
  static final String POSITION_FILE = "position-file";
  static final String POSITION_FILE_OF_ONE = "position-file-of-one";     // every row names the data file
  static final String ICEBERG_VECTOR = "iceberg-dv";
  static final String PAIMON_VECTOR = "paimon-dv";
  private static final byte[] ICEBERG_MAGIC = {(byte) 0xD1, (byte) 0xD3, 0x39, 0x64};
  private static final int PAIMON_MAGIC = 1581511376;

  private DeleteSources() {
  }

  /** One source of a data file's deleted positions (a line of the option, parsed). */
  static final class Source implements java.io.Serializable {
    final String target;    // the data file's path as the table's metadata names it
    final String kind;
    final String file;
    final long offset;
    final long length;

    Source(String target, String kind, String file, long offset, long length) {
      this.target = target;
      this.kind = kind;
      this.file = file;
      this.offset = offset;
      this.length = length;
    }
  }

  /** The line's source, or null when it is not one (fewer than five fields). */
  static Source parse(String line) {
    // the four fields after the data file's path hold no tab; the path is what precedes them
    int[] tabs = new int[4];
    int at = line.length();
    for (int i = 3; i >= 0; i--) {
      at = line.lastIndexOf('\t', at - 1);
      if (at <= 0) {
        return null;
      }
      tabs[i] = at;
    }
    return new Source(line.substring(0, tabs[0]), line.substring(tabs[0] + 1, tabs[1]),
        line.substring(tabs[1] + 1, tabs[2]), Long.parseLong(line.substring(tabs[2] + 1, tabs[3])),
        Long.parseLong(line.substring(tabs[3] + 1)));
  }

  /** {@code words} (a bitmap: bit {@code p % 64} of word {@code p / 64}) with the source's positions set. */
  static long[] mark(long[] words, Source s, Configuration conf) {
    try {
      switch (s.kind) {
        case POSITION_FILE:
          return markPositionFile(words, s, false);
        case POSITION_FILE_OF_ONE:
          return markPositionFile(words, s, true);
        case ICEBERG_VECTOR:
          return markIcebergVector(words, s, conf);
        case PAIMON_VECTOR:
          return markPaimonVector(words, s, conf);
        default:
          throw new IllegalArgumentException("unknown source of deleted rows: " + s.kind);
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("icefloe: cannot read the deletes of " + s.target + " from " + s.file
          + ": " + e.getMessage(), e);
    }
  }

  static long[] set(long[] words, long pos) {
    if (pos < 0) {
      throw new IllegalStateException("negative position " + pos);
    }
    int word = (int) (pos >>> 6);
    if (word >= words.length) {
      words = java.util.Arrays.copyOf(words, Math.max(words.length * 2, word + 1));
    }
    words[word] |= 1L << (pos & 63);
    return words;
  }

  // ------------------------------------------------------------------ Iceberg position delete files
  /** A position delete file's rows naming the data file; {@code all}: every row does (its
   * metadata says so), and only {@code pos} is read. */
  private static long[] markPositionFile(long[] words, Source s, boolean all) throws IOException {
    VectorizedParquetRecordReader reader = new VectorizedParquetRecordReader(false, 4096);
    try {
      try {
        reader.initialize(s.file, all ? java.util.Arrays.asList("pos") : java.util.Arrays.asList("file_path", "pos"));
      } catch (IOException | RuntimeException e) {   // unreadable, or without the columns the spec names
        throw new IOException("not a position delete file: " + e.getMessage(), e);
      }
      ColumnarBatch batch = reader.resultBatch();
      int posAt = all ? 0 : 1;
      if (batch.numCols() != posAt + 1 || !(batch.column(posAt).dataType() instanceof LongType)
          || (!all && !(batch.column(0).dataType() instanceof StringType))) {
        throw new IOException("not a position delete file: its file_path or pos column is not as the spec says");
      }
      UTF8String target = UTF8String.fromString(s.target);
      long[] values = new long[0];
      while (reader.nextBatch()) {
        int n = batch.numRows();
        ColumnVector positions = batch.column(posAt);
        if (positions.hasNull()) {
          throw new IOException("not a position delete file: a row has no pos");
        }
        if (values.length < n) {
          values = new long[n];
        }
        System.arraycopy(positions.getLongs(0, n), 0, values, 0, n);
        if (all) {
          long top = values[n - 1];
          for (int i = 0; i < n; i++) {
            top = Math.max(top, values[i]);
          }
          words = set(words, top);       // the bitmap's size once, then plain stores
          for (int i = 0; i < n; i++) {
            long p = values[i];
            if (p < 0) {
              throw new IOException("not a position delete file: negative position " + p);
            }
            words[(int) (p >>> 6)] |= 1L << (p & 63);
          }
        } else {
          ColumnVector paths = batch.column(0);
          for (int i = 0; i < n; i++) {
            if (!paths.isNullAt(i) && target.equals(paths.getUTF8String(i))) {
              words = set(words, values[i]);
            }
          }
        }
      }
    } finally {
      reader.close();
    }
    return words;
  }

  // ------------------------------------------------------------------ deletion vectors
  private static byte[] readRange(Source s, long offset, int length, Configuration conf) throws IOException {
    Path path = new Path(s.file);
    FileSystem fs = path.getFileSystem(conf);
    byte[] out = new byte[length];
    try (FSDataInputStream in = fs.open(path)) {
      in.readFully(offset, out);
    } catch (java.io.EOFException e) {
      throw new IOException("the file ends before the " + length + " bytes of the vector at offset " + offset);
    }
    return out;
  }

  private static int crc(byte[] bytes, int from, int length) {
    CRC32 c = new CRC32();
    c.update(bytes, from, length);
    return (int) c.getValue();
  }

  /** Iceberg: length (big-endian, of magic and bitmap), magic, a 64-bit Roaring bitmap in its portable form, CRC-32. */
  private static long[] markIcebergVector(long[] words, Source s, Configuration conf) throws IOException {
    if (s.length < 12 || s.length > Integer.MAX_VALUE) {
      throw new IOException("a deletion vector blob of " + s.length + " bytes");
    }
    byte[] blob = readRange(s, s.offset, (int) s.length, conf);
    ByteBuffer big = ByteBuffer.wrap(blob);
    int n = big.getInt(0);
    if ((long) n + 8 != s.length) {
      throw new IOException("deletion vector length " + n + " does not match its blob of " + s.length + " bytes");
    }
    for (int i = 0; i < 4; i++) {
      if (blob[4 + i] != ICEBERG_MAGIC[i]) {
        throw new IOException("deletion vector blob lacks its magic bytes");
      }
    }
    if (big.getInt(4 + n) != crc(blob, 4, n)) {
      throw new IOException("deletion vector checksum does not match its bitmap");
    }
    ByteBuffer bitmap = ByteBuffer.wrap(blob, 8, n - 4).slice().order(ByteOrder.LITTLE_ENDIAN);
    long buckets = bitmap.getLong();
    if (buckets < 0 || buckets > Integer.MAX_VALUE) {
      throw new IOException("deletion vector bitmap has " + buckets + " buckets");
    }
    for (long b = 0; b < buckets; b++) {
      long high = Integer.toUnsignedLong(bitmap.getInt());
      words = markBitmap(words, bitmap, high << 32);
    }
    return words;
  }

  /** Paimon: size (big-endian, of magic and bitmap), magic, a 32-bit Roaring bitmap in its portable form, CRC-32. */
  private static long[] markPaimonVector(long[] words, Source s, Configuration conf) throws IOException {
    if (s.length < 4 || s.length > Integer.MAX_VALUE - 8) {
      throw new IOException("a deletion vector of " + s.length + " bytes");
    }
    byte[] raw = readRange(s, s.offset, (int) s.length + 8, conf);
    ByteBuffer big = ByteBuffer.wrap(raw);
    int size = big.getInt(0);
    int magic = big.getInt(4);
    if (magic != PAIMON_MAGIC) {
      throw new IOException("deletion vector at offset " + s.offset + " has magic " + magic + ", not " + PAIMON_MAGIC);
    }
    if (size != s.length) {
      throw new IOException("deletion vector at offset " + s.offset + " is " + size + " bytes, the index manifest records "
          + s.length);
    }
    if (big.getInt(4 + size) != crc(raw, 4, size)) {
      throw new IOException("deletion vector at offset " + s.offset + " fails its checksum");
    }
    return markBitmap(words, ByteBuffer.wrap(raw, 8, size - 4).slice().order(ByteOrder.LITTLE_ENDIAN), 0);
  }

  /** Sets the positions {@code base + v} of the 32-bit Roaring bitmap at the buffer's position, which it passes. */
  private static long[] markBitmap(long[] words, ByteBuffer in, long base) throws IOException {
    RoaringBitmap rb = new RoaringBitmap();
    rb.deserialize(in.slice().order(ByteOrder.LITTLE_ENDIAN));
    in.position(in.position() + rb.serializedSizeInBytes());
    if (!rb.isEmpty()) {
      long top = base + Integer.toUnsignedLong(rb.last());
      if ((top >>> 6) >= Integer.MAX_VALUE) {
        throw new IOException("deleted position " + top + " is beyond any file's rows");
      }
      int need = (int) (top >>> 6) + 1;
      if (need > words.length) {
        words = java.util.Arrays.copyOf(words, need);
      }
    }
    IntIterator it = rb.getIntIterator();
    while (it.hasNext()) {
      long pos = base + Integer.toUnsignedLong(it.next());
      words[(int) (pos >>> 6)] |= 1L << (pos & 63);
    }
    return words;
  }
}
