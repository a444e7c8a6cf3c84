package icefloe.jvm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.api.InitContext;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.io.api.RecordMaterializer;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The deleted positions of one data file, read in the task that reads the file, from where a table
 * format keeps them: an Iceberg position delete file (Parquet rows of {@code file_path}, {@code pos};
 * only the rows naming the data file count, found with the file's statistics and a record filter),
 * an Iceberg {@code deletion-vector-v1} blob of a Puffin file, or a Paimon deletion vector in an
 * index file. Each source is one line of the {@code icefloe.deleted-rows-in} option:
 * {@code data-file TAB kind TAB file TAB offset TAB length}. A source that cannot be read fails the
 * task with an error naming the file and what is wrong with it: rows are never kept by mistake.
 */
final class DeleteSources {
  static final String POSITION_FILE = "position-file";
  static final String ICEBERG_VECTOR = "iceberg-dv";
  static final String PAIMON_VECTOR = "paimon-dv";
  private static final byte[] ICEBERG_MAGIC = {(byte) 0xD1, (byte) 0xD3, 0x39, 0x64};
  private static final int PAIMON_MAGIC = 1581511376;
  // Iceberg's reserved field ids of a position delete file's columns
  private static final int FILE_PATH_ID = 2147483546;
  private static final int POS_ID = 2147483545;

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
          return markPositionFile(words, s, conf);
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
  private static long[] markPositionFile(long[] words, Source s, Configuration conf) throws IOException {
    try (ParquetReader<Long> reader = ParquetReader.builder(new Positions(), new Path(s.file)).withConf(conf)
        .withFilter(FilterCompat.get(FilterApi.eq(FilterApi.binaryColumn("file_path"), Binary.fromString(s.target))))
        .build()) {
      for (Long pos = reader.read(); pos != null; pos = reader.read()) {
        words = set(words, pos);
      }
    }
    return words;
  }

  /** Reads a position delete file's {@code pos} values; {@code file_path} is read only to be filtered on. */
  private static final class Positions extends ReadSupport<Long> {
    private int posIndex = -1;          // of the read schema, set when the file is opened

    private static Type column(MessageType schema, int id, String name) {
      for (Type t : schema.getFields()) {
        if (t.getId() != null && t.getId().intValue() == id) {
          return t;
        }
      }
      for (Type t : schema.getFields()) {
        if (t.getName().equals(name)) {
          return t;
        }
      }
      throw new IllegalStateException("not a position delete file: it has no " + name + " column");
    }

    @Override
    public ReadContext init(InitContext context) {
      MessageType file = context.getFileSchema();
      Type path = column(file, FILE_PATH_ID, "file_path");
      Type pos = column(file, POS_ID, "pos");
      if (!path.getName().equals("file_path") || !path.isPrimitive() || !pos.isPrimitive()
          || pos.asPrimitiveType().getPrimitiveTypeName() != PrimitiveType.PrimitiveTypeName.INT64) {
        throw new IllegalStateException("not a position delete file: its file_path or pos column is not as the spec says");
      }
      List<Type> fields = new ArrayList<>();
      for (Type t : file.getFields()) {      // in the file's order
        if (t == path || t == pos) {
          if (t == pos) {
            posIndex = fields.size();
          }
          fields.add(t);
        }
      }
      return new ReadContext(new MessageType(file.getName(), fields));
    }

    @Override
    public RecordMaterializer<Long> prepareForRead(Configuration conf, java.util.Map<String, String> meta,
        MessageType fileSchema, ReadContext context) {
      final int at = posIndex;
      final long[] current = new long[1];
      final boolean[] seen = new boolean[1];
      PrimitiveConverter ignore = new PrimitiveConverter() {
        @Override
        public void addBinary(Binary value) {
        }
      };
      PrimitiveConverter position = new PrimitiveConverter() {
        @Override
        public void addLong(long value) {
          current[0] = value;
          seen[0] = true;
        }
      };
      GroupConverter root = new GroupConverter() {
        @Override
        public Converter getConverter(int i) {
          return i == at ? position : ignore;
        }

        @Override
        public void start() {
          seen[0] = false;
        }

        @Override
        public void end() {
        }
      };
      return new RecordMaterializer<Long>() {
        @Override
        public Long getCurrentRecord() {
          if (!seen[0]) {
            throw new IllegalStateException("not a position delete file: a row has no pos");
          }
          return current[0];
        }

        @Override
        public GroupConverter getRootConverter() {
          return root;
        }
      };
    }
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
