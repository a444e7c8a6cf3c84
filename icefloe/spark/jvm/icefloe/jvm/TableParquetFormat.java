package icefloe.jvm;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Function1;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * Spark's Parquet format, except that the files named in the option {@link #OPTION} are each read
 * by one task. Spark cuts a file into byte ranges and a range reads the row groups whose middle it
 * holds, so a file of one row group cut in two gives one task all of its rows and another nothing
 * but the footer to read; the table's metadata (Iceberg's split offsets) says which files are like
 * that, and those are left whole. Files not named are split as Spark would.
 *
 * <p>String columns are read through {@link DictionaryStringVector}, which decodes each entry of a
 * dictionary-encoded column chunk once rather than once per row. Subclasses change what is read by
 * overriding {@link #reader}; the strings are wrapped last, over whatever that returns.
 */
public class TableParquetFormat extends ParquetFileFormat {
  /** The keys ({@link DeletedRowsParquetFormat#key}) of the files to read whole, one per line. */
  public static final String OPTION = "icefloe.whole-files";

  private transient Set<String> whole;
  private transient String wholeSpec;

  @Override
  public String shortName() {
    return "icefloe-parquet-table";
  }

  @Override
  public String toString() {
    return "Parquet";
  }

  @Override
  public boolean isSplitable(SparkSession spark, scala.collection.immutable.Map<String, String> options,
      Path path) {
    String spec = options.get(OPTION).getOrElse(() -> "");
    if (spec.isEmpty()) {
      return super.isSplitable(spark, options, path);
    }
    return !wholeFiles(spec).contains(DeletedRowsParquetFormat.key(path.toString()));
  }

  private synchronized Set<String> wholeFiles(String spec) {
    if (!spec.equals(wholeSpec)) {     // planning asks once per file: parse the list once
      Set<String> out = new HashSet<>();
      for (String line : spec.split("\n")) {
        if (!line.isEmpty()) {
          out.add(DeletedRowsParquetFormat.key(line));
        }
      }
      whole = out;
      wholeSpec = spec;
    }
    return whole;
  }

  /** Spark's reader ({@link #parquetReader}); a subclass's may change the batches it returns. */
  protected Function1<PartitionedFile, Iterator<InternalRow>> reader(SparkSession spark, StructType dataSchema,
      StructType partitionSchema, StructType requiredSchema, Seq<Filter> filters,
      scala.collection.immutable.Map<String, String> options, Configuration hadoopConf) {
    return parquetReader(spark, dataSchema, partitionSchema, requiredSchema, filters, options, hadoopConf);
  }

  /**
   * Spark's own Parquet reader, except for its row index (the temporary column of
   * {@code _metadata.row_index}): Spark counts a file's positions through a boxed value per row,
   * about a third of the CPU of a row-level change's scan. A split that is its whole file is read by
   * Spark's reader without that column and without filters pushed into Parquet (so no row group
   * or page is skipped), and its positions are counted from 0 into a vector of its own, when that
   * skips nothing Spark's reader would have: no filter was pushed, or the file is one the table's
   * metadata says holds one row group (named in {@link #OPTION}; a file the scan's planning kept by
   * the same bounds). A part of a file, or a file of several row groups under a filter, is read as
   * Spark reads it.
   */
  protected final Function1<PartitionedFile, Iterator<InternalRow>> parquetReader(SparkSession spark,
      StructType dataSchema, StructType partitionSchema, StructType requiredSchema, Seq<Filter> filters,
      scala.collection.immutable.Map<String, String> options, Configuration hadoopConf) {
    int index = requiredSchema.getFieldIndex(ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME()).getOrElse(() -> -1);
    boolean batches = "true".equals(options.get(org.apache.spark.sql.execution.datasources.FileFormat$.MODULE$
        .OPTION_RETURNING_BATCH()).getOrElse(() -> "false"));
    Function1<PartitionedFile, Iterator<InternalRow>> own = super.buildReaderWithPartitionValues(spark, dataSchema,
        partitionSchema, requiredSchema, filters, options, new Configuration(hadoopConf));
    if (index < 0 || !batches || spark.sessionState().conf().offHeapColumnVectorEnabled()) {
      return own;
    }
    StructType less = new StructType();
    for (int i = 0; i < requiredSchema.length(); i++) {
      if (i != index) {
        less = less.add(requiredSchema.fields()[i]);
      }
    }
    Function1<PartitionedFile, Iterator<InternalRow>> counted = super.buildReaderWithPartitionValues(spark,
        dataSchema, partitionSchema, less, scala.collection.immutable.List$.MODULE$.empty(), options,
        new Configuration(hadoopConf));
    return new CountedPositions(own, counted, index, filters.isEmpty(),
        new HashSet<>(wholeFiles(options.get(OPTION).getOrElse(() -> ""))));
  }

  @Override
  public final Function1<PartitionedFile, Iterator<InternalRow>> buildReaderWithPartitionValues(
      SparkSession spark, StructType dataSchema, StructType partitionSchema, StructType requiredSchema,
      Seq<Filter> filters, scala.collection.immutable.Map<String, String> options, Configuration hadoopConf) {
    Function1<PartitionedFile, Iterator<InternalRow>> inner = reader(spark, dataSchema, partitionSchema,
        requiredSchema, filters, options, hadoopConf);
    int[] strings = stringColumns(requiredSchema);
    return strings.length == 0 ? inner : new DecodedStrings(inner, strings);
  }

  /** The vector classes generated code may assume: a string column's is {@link DictionaryStringVector}. */
  @Override
  public scala.Option<Seq<String>> vectorTypes(StructType requiredSchema, StructType partitionSchema, SQLConf conf) {
    scala.Option<Seq<String>> types = super.vectorTypes(requiredSchema, partitionSchema, conf);
    int[] strings = stringColumns(requiredSchema);
    if (types.isEmpty() || strings.length == 0) {
      return types;
    }
    List<String> out = new ArrayList<>(CollectionConverters.asJava(types.get()));
    for (int c : strings) {
      out.set(c, DictionaryStringVector.class.getName());
    }
    return scala.Option.apply(CollectionConverters.asScala(out).toList());
  }

  private static int[] stringColumns(StructType schema) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < schema.length(); i++) {
      if (schema.fields()[i].dataType() instanceof StringType) {
        out.add(i);
      }
    }
    return out.stream().mapToInt(Integer::intValue).toArray();
  }

  /** Whole files' batches with their positions counted into the row index's column; other splits as
   * Spark's reader gives them. */
  private static final class CountedPositions extends AbstractFunction1<PartitionedFile, Iterator<InternalRow>>
      implements java.io.Serializable {
    private final Function1<PartitionedFile, Iterator<InternalRow>> own;
    private final Function1<PartitionedFile, Iterator<InternalRow>> counted;
    private final int index;
    private final boolean unfiltered;
    private final HashSet<String> onePiece;     // keys of the files of one row group

    CountedPositions(Function1<PartitionedFile, Iterator<InternalRow>> own,
        Function1<PartitionedFile, Iterator<InternalRow>> counted, int index, boolean unfiltered,
        HashSet<String> onePiece) {
      this.own = own;
      this.counted = counted;
      this.index = index;
      this.unfiltered = unfiltered;
      this.onePiece = onePiece;
    }

    @Override
    public Iterator<InternalRow> apply(PartitionedFile file) {
      if (file.start() != 0 || file.length() < file.fileSize()
          || !(unfiltered || onePiece.contains(DeletedRowsParquetFormat.key(file.toPath().toString())))) {
        return own.apply(file);
      }
      return new MappedBatches(counted.apply(file)) {
        private OnHeapColumnVector positions;
        private int size;
        private long next;

        @Override
        ColumnarBatch map(ColumnarBatch batch) {
          int n = batch.numRows();
          if (positions == null || size < n) {
            size = Math.max(n, 4096);
            positions = new OnHeapColumnVector(size, DataTypes.LongType);
          }
          for (int r = 0; r < n; r++) {
            positions.putLong(r, next + r);
          }
          next += n;
          ColumnVector[] columns = new ColumnVector[batch.numCols() + 1];
          for (int c = 0, j = 0; c < columns.length; c++) {
            columns[c] = c == index ? positions : batch.column(j++);
          }
          return new ColumnarBatch(columns, n);
        }
      }.asRows();
    }
  }

  /** The reader's batches with their string columns read through {@link DictionaryStringVector}. */
  private static final class DecodedStrings extends AbstractFunction1<PartitionedFile, Iterator<InternalRow>>
      implements java.io.Serializable {
    private final Function1<PartitionedFile, Iterator<InternalRow>> inner;
    private final int[] strings;

    DecodedStrings(Function1<PartitionedFile, Iterator<InternalRow>> inner, int[] strings) {
      this.inner = inner;
      this.strings = strings;
    }

    @Override
    public Iterator<InternalRow> apply(PartitionedFile file) {
      DictionaryStringVector[] wrapped = new DictionaryStringVector[strings.length];
      return new MappedBatches(inner.apply(file)) {
        @Override
        ColumnarBatch map(ColumnarBatch batch) {
          ColumnVector[] columns = new ColumnVector[batch.numCols()];
          for (int c = 0; c < columns.length; c++) {
            columns[c] = batch.column(c);
          }
          for (int k = 0; k < strings.length; k++) {
            if (wrapped[k] == null) {
              wrapped[k] = new DictionaryStringVector(columns[strings[k]]);
            } else {
              wrapped[k].reset(columns[strings[k]]);
            }
            columns[strings[k]] = wrapped[k];
          }
          return new ColumnarBatch(columns, batch.numRows());
        }
      }.asRows();
    }
  }

  /** A reader's output with each batch replaced by {@link #map}'s (rows, from a reader that is not
   * vectorized, pass as they are). */
  private abstract static class MappedBatches extends scala.collection.AbstractIterator<Object> {
    private final Iterator<InternalRow> rows;

    MappedBatches(Iterator<InternalRow> rows) {
      this.rows = rows;
    }

    abstract ColumnarBatch map(ColumnarBatch batch);

    @Override
    public boolean hasNext() {
      return rows.hasNext();
    }

    @Override
    public Object next() {
      Object next = rows.next();
      return next instanceof ColumnarBatch ? map((ColumnarBatch) next) : next;
    }

    /** This, typed as Spark's readers type it: an iterator of rows that hands batches through. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    Iterator<InternalRow> asRows() {
      return (Iterator) this;
    }
  }
}
