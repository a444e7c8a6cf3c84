package icefloe.jvm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The deleted positions of one data file, read in the task that reads the file, from where a table
 * format keeps them: an Iceberg position delete file (Parquet rows of {@code file_path}, {@code pos},
 * the columns the spec names; only the rows naming the data file count; read with Parquet's column readers,
 * or, for a file whose rows all name the data file and whose {@code pos} is required and PLAIN, straight
 * from its pages),
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
          return markPositionFile(words, s, false, conf);
        case POSITION_FILE_OF_ONE:
          return markPositionFile(words, s, true, conf);
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

  /** {@code words} with every one of {@code positions} set (grown once, to the largest). */
  static long[] setAll(long[] words, long[] positions) {
    long top = -1;
    for (long p : positions) {
      if (p < 0) {
        throw new IllegalStateException("negative position " + p);
      }
      top = Math.max(top, p);
    }
    if (top >= 0 && (top >>> 6) >= words.length) {
      if ((top >>> 6) >= Integer.MAX_VALUE) {
        throw new IllegalStateException("deleted position " + top + " is beyond any file's rows");
      }
      words = java.util.Arrays.copyOf(words, (int) (top >>> 6) + 1);
    }
    for (long p : positions) {
      words[(int) (p >>> 6)] |= 1L << (p & 63);
    }
    return words;
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
  private static final PrimitiveConverter IGNORED = new PrimitiveConverter() {
  };
  private static final GroupConverter NO_RECORDS = new GroupConverter() {
    @Override
    public Converter getConverter(int fieldIndex) {
      return IGNORED;
    }

    @Override
    public void start() {
    }

    @Override
    public void end() {
    }
  };

  private static Type column(MessageType schema, String name, PrimitiveType.PrimitiveTypeName type) throws IOException {
    if (!schema.containsField(name) || !schema.getType(name).isPrimitive()
        || schema.getType(name).asPrimitiveType().getPrimitiveTypeName() != type) {
      throw new IOException("not a position delete file: it has no " + type + " column " + name);
    }
    return schema.getType(name);
  }

  /** A position delete file's rows naming the data file, column by column with Parquet's own
   * readers (row groups whose {@code file_path} range leaves the data file out are skipped);
   * {@code all}: every row names it (the file's metadata says so), and only {@code pos} is read. */
  private static long[] markPositionFile(long[] words, Source s, boolean all, Configuration conf) throws IOException {
    ParquetFileReader reader;
    try {
      // the reader's options from the task's settings, no filter (every row group read): without
      // options, Parquet builds its defaults from a new Hadoop configuration, which parses the
      // configuration files again for every delete file opened
      reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(s.file), conf),
          HadoopReadOptions.builder(conf).withRecordFilter(FilterCompat.NOOP).build());
    } catch (IOException | RuntimeException e) {
      throw new IOException("not a position delete file: " + e.getMessage(), e);
    }
    try (ParquetFileReader r = reader) {
      MessageType schema = r.getFileMetaData().getSchema();
      Type pathType = column(schema, "file_path", PrimitiveType.PrimitiveTypeName.BINARY);
      Type posType = column(schema, "pos", PrimitiveType.PrimitiveTypeName.INT64);
      MessageType read = new MessageType(schema.getName(),
          all ? java.util.Collections.singletonList(posType) : java.util.Arrays.asList(pathType, posType));
      r.setRequestedSchema(read);
      ColumnDescriptor pathColumn = all ? null : read.getColumnDescription(new String[] {"file_path"});
      ColumnDescriptor posColumn = read.getColumnDescription(new String[] {"pos"});
      Binary target = Binary.fromString(s.target);
      for (BlockMetaData block : r.getRowGroups()) {
        if (!all && leavesOut(block, target)) {
          r.skipNextRowGroup();
          continue;
        }
        PageReadStore rows = r.readNextRowGroup();
        if (all && plainValues(block, posColumn)) {
          words = markPlainPositions(words, rows.getPageReader(posColumn), rows.getRowCount());
          continue;
        }
        ColumnReadStoreImpl store = new ColumnReadStoreImpl(rows, NO_RECORDS, read, r.getFileMetaData().getCreatedBy());
        ColumnReader pos = store.getColumnReader(posColumn);
        ColumnReader paths = all ? null : store.getColumnReader(pathColumn);
        int posDefined = posColumn.getMaxDefinitionLevel();
        int pathDefined = all ? 0 : pathColumn.getMaxDefinitionLevel();
        for (long i = 0, n = rows.getRowCount(); i < n; i++) {
          boolean named = true;
          if (paths != null) {
            named = paths.getCurrentDefinitionLevel() == pathDefined && target.equals(paths.getBinary());
            paths.consume();
          }
          if (pos.getCurrentDefinitionLevel() != posDefined) {
            throw new IOException("not a position delete file: a row has no pos");
          }
          long p = pos.getLong();
          pos.consume();
          if (named) {
            words = set(words, p);
          }
        }
      }
    }
    return words;
  }

  /** Whether a row group's chunk of {@code column} (of no definition or repetition levels: required,
   * not nested) holds its values in PLAIN pages only: no dictionary, no other encoding of values. */
  private static boolean plainValues(BlockMetaData block, ColumnDescriptor column) {
    if (column.getMaxDefinitionLevel() != 0 || column.getMaxRepetitionLevel() != 0) {
      return false;
    }
    for (ColumnChunkMetaData chunk : block.getColumns()) {
      if (java.util.Arrays.equals(chunk.getPath().toArray(), column.getPath())) {
        if (chunk.hasDictionaryPage()) {
          return false;
        }
        for (Encoding e : chunk.getEncodings()) {
          // BIT_PACKED and RLE are the levels' encodings (none here); an INT64 value is never RLE
          if (e != Encoding.PLAIN && e != Encoding.BIT_PACKED && e != Encoding.RLE) {
            return false;
          }
        }
        return true;
      }
    }
    return false;
  }

  /** Sets the positions of a required INT64 column chunk whose pages are all PLAIN ({@link #plainValues}):
   * each page's values are its bytes, eight little-endian bytes a value, read straight into the bitmap
   * rather than through a column reader a value at a time. The pages must hold {@code rows} values. */
  private static long[] markPlainPositions(long[] words, PageReader pages, long rows) throws IOException {
    if (pages.readDictionaryPage() != null) {
      throw new IOException("a dictionary page in a column chunk its metadata says has none");
    }
    long seen = 0;
    for (DataPage page = pages.readPage(); page != null; page = pages.readPage()) {
      BytesInput values;
      Encoding encoding;
      int count;
      if (page instanceof DataPageV1) {
        DataPageV1 v1 = (DataPageV1) page;
        values = v1.getBytes();
        encoding = v1.getValueEncoding();
        count = v1.getValueCount();
      } else if (page instanceof DataPageV2) {
        DataPageV2 v2 = (DataPageV2) page;
        if (v2.getNullCount() != 0) {
          throw new IOException("a row has no pos");
        }
        values = v2.getData();
        encoding = v2.getDataEncoding();
        count = v2.getValueCount();
      } else {
        throw new IOException("a data page of an unknown kind: " + page.getClass().getName());
      }
      if (encoding != Encoding.PLAIN) {
        throw new IOException("a page of pos encoded " + encoding + " in a column chunk its metadata says is PLAIN");
      }
      ByteBuffer bytes = ByteBuffer.wrap(values.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
      if (bytes.remaining() != 8L * count) {
        throw new IOException("a page of " + count + " positions holds " + bytes.remaining() + " bytes");
      }
      // one bulk copy, then a loop over plain longs: cheap even before the JIT has compiled it (a
      // task reads its deletes once, and early)
      long[] positions = new long[count];
      bytes.asLongBuffer().get(positions);
      words = setAll(words, positions);
      seen += count;
    }
    if (seen != rows) {
      throw new IOException("a row group of " + rows + " rows holds " + seen + " positions");
    }
    return words;
  }

  /** Whether a row group's {@code file_path} statistics show it holds no row naming {@code target}. */
  private static boolean leavesOut(BlockMetaData block, Binary target) {
    for (ColumnChunkMetaData chunk : block.getColumns()) {
      if (chunk.getPath().toDotString().equals("file_path")) {
        org.apache.parquet.column.statistics.Statistics<?> stats = chunk.getStatistics();
        if (stats == null || !stats.hasNonNullValue() || !(stats.genericGetMin() instanceof Binary)) {
          return false;
        }
        @SuppressWarnings("unchecked")
        org.apache.parquet.schema.PrimitiveComparator<Binary> order =
            (org.apache.parquet.schema.PrimitiveComparator<Binary>) stats.comparator();
        return order.compare(target, (Binary) stats.genericGetMin()) < 0
            || order.compare(target, (Binary) stats.genericGetMax()) > 0;
      }
    }
    return false;
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
