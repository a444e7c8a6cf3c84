package icefloe.jvm;

import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;
import scala.Function1;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * Spark's own Parquet reader, less the rows a table format has deleted by position.
 *
 * <p>The option {@code icefloe.deleted-rows} lists, per data file, the positions deleted from it
 * (lines of {@code path TAB base64(positions)}, the positions ascending and delta-encoded as unsigned
 * LEB128 varints); the driver broadcasts them. Each task turns its file's positions into a bitmap and drops the marked rows
 * from every batch the vectorized reader returns, by a row selection over the batch's own vectors
 * (no copy); the row-based reader's rows are filtered one by one. With filters pushed into the
 * reader (which may skip row groups) the positions are the reader's row index; without any, the
 * rows of a split arrive in order from its first row group and their positions are counted, which
 * spares Spark's row index (a boxed value per row). A file without deletes is read as it is.
 */
public class DeletedRowsParquetFormat extends TableParquetFormat {
  public static final String OPTION = "icefloe.deleted-rows";
  /** Where each file's deleted positions are kept, read by the task (lines of {@link DeleteSources}). */
  public static final String SOURCES = "icefloe.deleted-rows-in";

  /** Each file's deletes: positions given, and files to read them from; broadcast once per scan. */
  static final class Deletes implements java.io.Serializable {
    final HashMap<String, String> encoded;
    final HashMap<String, List<DeleteSources.Source>> sources;

    Deletes(HashMap<String, String> encoded, HashMap<String, List<DeleteSources.Source>> sources) {
      this.encoded = encoded;
      this.sources = sources;
    }

    boolean isEmpty() {
      return encoded.isEmpty() && sources.isEmpty();
    }
  }

  @Override
  public String shortName() {
    return "icefloe-parquet";
  }

  @Override
  public String toString() {
    return "Parquet (icefloe deleted rows)";
  }

  /**
   * The reader's own vector classes when every column's rows can be moved down in place (constant
   * vectors need nothing); otherwise batches may hold selections, and generated code must not assume
   * a class.
   */
  @Override
  public scala.Option<Seq<String>> vectorTypes(StructType requiredSchema, StructType partitionSchema,
      org.apache.spark.sql.internal.SQLConf conf) {
    for (StructField f : requiredSchema.fields()) {
      if (!Compaction.canCompact(f.dataType())) {
        return scala.Option.empty();
      }
    }
    return super.vectorTypes(requiredSchema, partitionSchema, conf);
  }

  @Override
  protected Function1<PartitionedFile, Iterator<InternalRow>> reader(
      SparkSession spark, StructType dataSchema, StructType partitionSchema, StructType requiredSchema,
      Seq<Filter> filters, scala.collection.immutable.Map<String, String> options, Configuration hadoopConf) {
    Deletes deleted = new Deletes(parse(options.get(OPTION).getOrElse(() -> "")),
        parseSources(options.get(SOURCES).getOrElse(() -> "")));
    String rowIndexName = ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME();
    int rowIndex = -1;
    for (int i = 0; i < requiredSchema.length(); i++) {
      if (requiredSchema.fields()[i].name().equals(rowIndexName)) {
        rowIndex = i;
      }
    }
    boolean added = rowIndex < 0 && !deleted.isEmpty();
    StructType schema = requiredSchema;
    if (added) {
      schema = requiredSchema.add(new StructField(rowIndexName, DataTypes.LongType, true, Metadata.empty()));
      rowIndex = requiredSchema.length();
    }
    // Spark's row index costs a boxed value per row; where no filter can skip rows (none pushed),
    // a file's rows arrive in order and their positions are counted instead, from the first row
    // of the split, and the reader with the row index is not built (each Spark reader broadcasts
    // the Hadoop settings, about 10 ms on the driver). Files without deletes skip both.
    // (each reader on its own copy of the settings: Spark's Parquet reader writes its schema into them)
    boolean counted = added && filters.isEmpty();
    Function1<PartitionedFile, Iterator<InternalRow>> inner = counted ? null : parquetReader(
        spark, dataSchema, partitionSchema, schema, filters, options, new Configuration(hadoopConf));
    if (deleted.isEmpty()) {
      return inner;
    }
    Function1<PartitionedFile, Iterator<InternalRow>> plain = added
        ? parquetReader(spark, dataSchema, partitionSchema, requiredSchema, filters, options,
            new Configuration(hadoopConf))
        : null;
    Broadcast<SerializableConfiguration> conf = counted || !deleted.sources.isEmpty()
        ? spark.sparkContext().broadcast(new SerializableConfiguration(hadoopConf),
            scala.reflect.ClassTag$.MODULE$.apply(SerializableConfiguration.class))
        : null;
    List<DataType> types = new ArrayList<>();
    for (StructField f : schema.fields()) {
      types.add(f.dataType());
    }
    for (StructField f : partitionSchema.fields()) {
      types.add(f.dataType());
    }
    // each executor fetches the positions once, rather than every task carrying every file's
    Broadcast<Deletes> shared = spark.sparkContext().broadcast(deleted,
        scala.reflect.ClassTag$.MODULE$.apply(Deletes.class));
    return new Reader(inner, plain, conf, shared, rowIndex, counted, added, types.toArray(new DataType[0]));
  }

  /** A file's key: its path without scheme, as the driver and the task both name it. */
  static String key(String path) {
    java.net.URI uri = new Path(path).toUri();
    return (uri.getAuthority() == null ? "" : uri.getAuthority()) + uri.getPath();
  }

  private static HashMap<String, String> parse(String spec) {
    HashMap<String, String> out = new HashMap<>();
    for (String line : spec.split("\n")) {
      int tab = line.lastIndexOf('\t');
      if (tab > 0) {
        out.put(key(line.substring(0, tab)), line.substring(tab + 1));
      }
    }
    return out;
  }

  private static HashMap<String, List<DeleteSources.Source>> parseSources(String spec) {
    HashMap<String, List<DeleteSources.Source>> out = new HashMap<>();
    for (String line : spec.split("\n")) {
      DeleteSources.Source source = DeleteSources.parse(line);
      if (source != null) {
        out.computeIfAbsent(key(source.target), k -> new ArrayList<>()).add(source);
      }
    }
    return out;
  }

  /** The positions' bitmap: bit {@code p % 64} of word {@code p / 64}. */
  static long[] bitmap(String encoded) {
    byte[] bytes = Base64.getDecoder().decode(encoded);
    long[] words = new long[16];
    long pos = 0;
    int i = 0;
    while (i < bytes.length) {
      long delta = 0;
      int shift = 0;
      byte b;
      do {
        b = bytes[i++];
        delta |= (long) (b & 0x7f) << shift;
        shift += 7;
      } while (b < 0);
      pos += delta;
      words = DeleteSources.set(words, pos);
    }
    return words;
  }

  private static final class Reader extends AbstractFunction1<PartitionedFile, Iterator<InternalRow>>
      implements java.io.Serializable {
    private final Function1<PartitionedFile, Iterator<InternalRow>> inner;
    private final Function1<PartitionedFile, Iterator<InternalRow>> plain;
    private final Broadcast<SerializableConfiguration> conf;
    private final Broadcast<Deletes> deleted;
    private final boolean counted;      // positions counted from the split's first row, not read
    private final int rowIndex;
    private final boolean dropRowIndex;
    private final DataType[] types;

    Reader(Function1<PartitionedFile, Iterator<InternalRow>> inner, Function1<PartitionedFile, Iterator<InternalRow>> plain,
        Broadcast<SerializableConfiguration> conf, Broadcast<Deletes> deleted, int rowIndex, boolean counted,
        boolean dropRowIndex, DataType[] types) {
      this.inner = inner;
      this.plain = plain;
      this.conf = conf;
      this.deleted = deleted;
      this.counted = counted;
      this.rowIndex = rowIndex;
      this.dropRowIndex = dropRowIndex;
      this.types = types;
    }

    @Override
    public Iterator<InternalRow> apply(PartitionedFile file) {
      String name = key(file.toPath().toString());
      Deletes all = deleted.value();
      String encoded = all.encoded.get(name);
      List<DeleteSources.Source> sources = all.sources.get(name);
      if (encoded == null && sources == null && plain != null) {
        return plain.apply(file);
      }
      long[] words = encoded == null ? new long[16] : bitmap(encoded);
      if (sources != null) {
        for (DeleteSources.Source source : sources) {
          words = DeleteSources.mark(words, source, conf.value().value());
        }
      }
      Iterator<?> filtered = counted
          ? new Filtered(plain.apply(file), words, -1, firstRow(file), false, types)
          : new Filtered(inner.apply(file), words, rowIndex, 0, dropRowIndex, types);
      // the vectorized reader hands batches through an iterator typed as rows (as Spark does)
      @SuppressWarnings("unchecked")
      Iterator<InternalRow> out = (Iterator<InternalRow>) filtered;
      return out;
    }

    /** The position of the split's first row: 0 for a whole file, else the number of rows in the row
     * groups before its first (the reader takes the row groups whose midpoint lies in the split). */
    private long firstRow(PartitionedFile file) {
      if (file.start() == 0 && file.length() >= file.fileSize()) {
        return 0;
      }
      try {
        long before = 0;
        for (BlockMetaData block : ParquetFileReader.readFooter(conf.value().value(), file.toPath(),
            ParquetMetadataConverter.NO_FILTER).getBlocks()) {
          long start = block.getStartingPos();
          if (start + block.getCompressedSize() / 2 >= file.start()) {
            break;
          }
          before += block.getRowCount();
        }
        return before;
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /** The reader's batches (or rows) less the marked positions, without the added row index. */
  private static final class Filtered extends scala.collection.AbstractIterator<Object> {
    private final Iterator<?> rows;
    private final long[] words;
    private final int rowIndex;         // the row index column, or -1: positions counted from position
    private final boolean drop;
    private final DataType[] types;
    private long position;              // the next row's, when counted
    private Object pending;

    Filtered(Iterator<?> rows, long[] words, int rowIndex, long first, boolean drop, DataType[] types) {
      this.rows = rows;
      this.words = words;
      this.rowIndex = rowIndex;
      this.position = first;
      this.drop = drop;
      this.types = types;
    }

    private boolean isDeleted(long pos) {
      int word = (int) (pos >>> 6);
      return word < words.length && (words[word] & (1L << (pos & 63))) != 0;
    }

    @Override
    public boolean hasNext() {
      while (pending == null && rows.hasNext()) {
        Object next = rows.next();
        if (next instanceof ColumnarBatch) {
          pending = batch((ColumnarBatch) next);
        } else {
          InternalRow row = (InternalRow) next;
          if (!isDeleted(rowIndex < 0 ? position++ : row.getLong(rowIndex))) {
            pending = drop ? withoutRowIndex(row) : row;
          }
        }
      }
      return pending != null;
    }

    @Override
    public Object next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      Object out = pending;
      pending = null;
      return out;
    }

    private UnsafeProjection projection;

    // the row less the added row index, as the unsafe row Spark's operators expect
    private InternalRow withoutRowIndex(InternalRow row) {
      if (projection == null) {
        List<Expression> columns = new ArrayList<>();
        for (int i = 0; i < types.length; i++) {
          if (i != rowIndex) {
            columns.add(new BoundReference(i, types[i], true));
          }
        }
        projection = UnsafeProjection.create(scala.jdk.javaapi.CollectionConverters.asScala(columns).toList());
      }
      return projection.apply(row);
    }

    private int[] goneRows = new int[0];     // each batch's deleted rows, ascending; reused
    private int[] keptRuns = new int[1];     // the kept rows' runs (Compaction's form); reused
    private int[] keptRows = new int[0];     // the kept rows, built only where a vector needs them

    /** The batch's deleted rows into {@link #goneRows}, ascending; returns how many. Counted
     * positions (consecutive from {@code base}) are found word by word in the bitmap, 64 rows at a
     * time; the reader's row index is tested row by row. */
    private int deletedRows(ColumnVector positions, long base, int n) {
      if (goneRows.length < n) {
        goneRows = new int[Math.max(n, 4096)];
      }
      int m = 0;
      if (positions != null) {
        for (int r = 0; r < n; r++) {
          if (isDeleted(positions.getLong(r))) {
            goneRows[m++] = r;
          }
        }
        return m;
      }
      long end = base + n;          // exclusive
      for (long w = base >>> 6; w < words.length && (w << 6) < end; w++) {
        long bits = words[(int) w];
        if (bits == 0) {
          continue;
        }
        long lo = w << 6;
        if (lo < base) {
          bits &= -1L << (base - lo);
        }
        if (end - lo < 64) {
          bits &= (1L << (end - lo)) - 1;
        }
        while (bits != 0) {
          goneRows[m++] = (int) (lo + Long.numberOfTrailingZeros(bits) - base);
          bits &= bits - 1;
        }
      }
      return m;
    }

    private ColumnarBatch batch(ColumnarBatch in) {
      int n = in.numRows();
      ColumnVector positions = rowIndex < 0 ? null : in.column(rowIndex);
      long base = position;
      position += n;
      int m = deletedRows(positions, base, n);
      if (m == 0 && !drop) {
        return in;
      }
      // the kept rows after the first deleted one, as runs between the deleted rows
      int first = m == 0 ? n : goneRows[0];       // the rows before it stay where they are
      int count = n - m;
      int[] runs = null;
      if (m > 0) {
        if (keptRuns.length < 1 + 3 * (m + 1)) {
          keptRuns = new int[1 + 3 * Math.max(m + 1, 256)];
        }
        runs = keptRuns;
        int runCount = 0;
        int to = first;
        for (int i = 0; i < m; i++) {
          int from = goneRows[i] + 1;
          int until = i + 1 < m ? goneRows[i + 1] : n;
          if (until > from) {
            runs[1 + 3 * runCount] = from;
            runs[2 + 3 * runCount] = to;
            runs[3 + 3 * runCount] = until - from;
            runCount++;
            to += until - from;
          }
        }
        runs[0] = runCount;
      }
      int[] kept = null;
      int width = in.numCols() - (drop ? 1 : 0);
      ColumnVector[] columns = new ColumnVector[width];
      for (int c = 0, j = 0; c < in.numCols(); c++) {
        if (drop && c == rowIndex) {
          continue;
        }
        ColumnVector v = in.column(c);
        // kept rows moved down in the reader's own vectors where their type allows (a constant
        // vector holds for any rows), by runs where it can, else one at a time; otherwise read
        // through a selection of exactly the kept rows
        if (runs == null || v instanceof ConstantColumnVector || Compaction.compactRuns(v, runs)) {
          columns[j++] = v;
          continue;
        }
        if (kept == null) {
          kept = keptRows(runs, first, count);
        }
        columns[j++] = Compaction.compact(v, kept, first, count)
            ? v : new SelectedRowsVector(v, java.util.Arrays.copyOf(kept, count));
      }
      return new ColumnarBatch(columns, count);
    }

    /** The kept rows (row {@code kept[k]} becomes row {@code k}) from the rows before {@code first}
     * and the runs after it. */
    private int[] keptRows(int[] runs, int first, int count) {
      if (keptRows.length < count) {
        keptRows = new int[Math.max(count, 4096)];
      }
      for (int k = 0; k < first; k++) {
        keptRows[k] = k;
      }
      for (int r = 0, k = first; r < runs[0]; r++) {
        for (int i = 0; i < runs[3 + 3 * r]; i++) {
          keptRows[k++] = runs[1 + 3 * r] + i;
        }
      }
      return keptRows;
    }
  }
}
