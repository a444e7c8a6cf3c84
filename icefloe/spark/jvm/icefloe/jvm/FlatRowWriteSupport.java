package icefloe.jvm;

import java.lang.reflect.Field;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnWriteStore;
import org.apache.parquet.column.ColumnWriter;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark's Parquet write support, writing the rows of a flat schema straight to the column writers.
 *
 * <p>Spark's own writer hands each value through a boxed per-field function and Parquet's record
 * consumer, which tracks every field started and ended; for a schema of top-level primitive columns
 * this class writes each value to its column's writer, with the levels the record consumer would
 * give it (repetition 0; definition 0 for a null, the column's maximum otherwise), then ends the
 * record in the column store as the consumer does. The file itself (schema, metadata, pages, row
 * groups, statistics) is Spark's: {@link #init} is Spark's, and so is every value conversion, done
 * here only for the types whose conversion is the identity on Spark's values. A schema with any
 * other column (nested, a legacy decimal, a rebased date or timestamp, INT96), or a record consumer
 * of another kind, is written by Spark's own {@link ParquetWriteSupport#write}.
 */
public class FlatRowWriteSupport extends ParquetWriteSupport {
  private static final String CONF = "parquet.write.support.class";
  private static final int BOOLEAN = 0, BYTE = 1, SHORT = 2, INT = 3, LONG = 4, FLOAT = 5, DOUBLE = 6,
      STRING = 7, BINARY = 8, DECIMAL_INT = 9, DECIMAL_LONG = 10;

  private static final LongAdder DIRECT = new LongAdder();

  private int[] kinds;            // per column, or null: Spark's writer writes every row
  private int[] precision;
  private int[] scale;
  private MessageType fileSchema;
  private ColumnWriter[] columns;  // null until prepareForWrite finds the column store
  private int[] defined;           // the maximum definition level of each column
  private ColumnWriteStore store;

  /** {@code conf} (a write's, as Spark's Parquet format prepared it) set to write through this class. */
  static void use(Configuration conf) {
    if (ParquetWriteSupport.class.getName().equals(conf.get(CONF))) {
      conf.set(CONF, FlatRowWriteSupport.class.getName());
    }
  }

  /**
   * How many row groups this JVM's writers have written straight to the column writers (Parquet's
   * writer prepares the write support again for each row group, with that row group's column store).
   */
  public static long directRowGroups() {
    return DIRECT.sum();
  }

  @Override
  public WriteContext init(Configuration conf) {
    WriteContext context = super.init(conf);
    StructType schema = org.apache.spark.sql.types.StructType$.MODULE$.fromString(conf.get(ParquetWriteSupport.SPARK_ROW_SCHEMA()));
    fileSchema = context.getSchema();
    kinds = plan(schema, fileSchema, rebased());
    if (kinds != null) {
      precision = new int[kinds.length];
      scale = new int[kinds.length];
      for (int i = 0; i < kinds.length; i++) {
        if (schema.fields()[i].dataType() instanceof DecimalType d) {
          precision[i] = d.precision();
          scale[i] = d.scale();
        }
      }
    }
    return context;
  }

  /** Whether Spark's writer rebases dates and timestamps (any mode but CORRECTED), or cannot say. */
  private boolean rebased() {
    try {
      Field f = ParquetWriteSupport.class.getDeclaredField("datetimeRebaseMode");
      f.setAccessible(true);
      return !"CORRECTED".equals(String.valueOf(f.get(this)));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return true;
    }
  }

  /** The kind of each column, or null when some column is not written here. */
  static int[] plan(StructType schema, MessageType file, boolean rebased) {
    if (schema.fields().length != file.getFieldCount() || file.getColumns().size() != file.getFieldCount()) {
      return null;
    }
    int[] kinds = new int[schema.fields().length];
    for (int i = 0; i < kinds.length; i++) {
      Type t = file.getType(i);
      if (!t.isPrimitive() || t.isRepetition(Type.Repetition.REPEATED)) {
        return null;
      }
      int kind = kind(schema.fields()[i].dataType(), t.asPrimitiveType().getPrimitiveTypeName(),
          t.getLogicalTypeAnnotation(), rebased);
      if (kind < 0) {
        return null;
      }
      kinds[i] = kind;
    }
    return kinds;
  }

  private static int kind(DataType type, PrimitiveTypeName physical, LogicalTypeAnnotation logical, boolean rebased) {
    boolean int32 = physical == PrimitiveTypeName.INT32, int64 = physical == PrimitiveTypeName.INT64;
    if (type instanceof BooleanType) {
      return physical == PrimitiveTypeName.BOOLEAN ? BOOLEAN : -1;
    } else if (type instanceof ByteType) {
      return int32 ? BYTE : -1;
    } else if (type instanceof ShortType) {
      return int32 ? SHORT : -1;
    } else if (type instanceof IntegerType) {
      return int32 ? INT : -1;
    } else if (type instanceof DateType) {
      return int32 && !rebased ? INT : -1;
    } else if (type instanceof LongType) {
      return int64 ? LONG : -1;
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      boolean micros = logical instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation ts
          && ts.getUnit() == LogicalTypeAnnotation.TimeUnit.MICROS;
      return int64 && micros && (type instanceof TimestampNTZType || !rebased) ? LONG : -1;
    } else if (type instanceof FloatType) {
      return physical == PrimitiveTypeName.FLOAT ? FLOAT : -1;
    } else if (type instanceof DoubleType) {
      return physical == PrimitiveTypeName.DOUBLE ? DOUBLE : -1;
    } else if (type instanceof StringType) {
      return physical == PrimitiveTypeName.BINARY ? STRING : -1;
    } else if (type instanceof BinaryType) {
      return physical == PrimitiveTypeName.BINARY ? BINARY : -1;
    } else if (type instanceof DecimalType) {
      return int32 ? DECIMAL_INT : int64 ? DECIMAL_LONG : -1;
    }
    return -1;
  }

  @Override
  public void prepareForWrite(RecordConsumer consumer) {
    super.prepareForWrite(consumer);
    columns = null;
    store = null;
    if (kinds == null || !"org.apache.parquet.io.MessageColumnIO$MessageColumnIORecordConsumer".equals(
        consumer.getClass().getName())) {
      return;
    }
    try {
      Field f = consumer.getClass().getDeclaredField("columns");
      f.setAccessible(true);
      ColumnWriteStore found = (ColumnWriteStore) f.get(consumer);
      ColumnWriter[] writers = new ColumnWriter[kinds.length];
      int[] levels = new int[kinds.length];
      for (int i = 0; i < kinds.length; i++) {
        ColumnDescriptor column = fileSchema.getColumns().get(i);
        writers[i] = found.getColumnWriter(column);
        levels[i] = column.getMaxDefinitionLevel();
      }
      store = found;
      defined = levels;
      columns = writers;
      DIRECT.increment();
    } catch (ReflectiveOperationException | RuntimeException e) {
      columns = null;           // Spark's writer, through the record consumer
    }
  }

  @Override
  public void write(InternalRow row) {
    ColumnWriter[] out = columns;
    if (out == null) {
      super.write(row);
      return;
    }
    int[] kind = kinds;
    for (int i = 0; i < out.length; i++) {
      ColumnWriter w = out[i];
      if (row.isNullAt(i)) {
        w.writeNull(0, 0);
        continue;
      }
      int d = defined[i];
      switch (kind[i]) {
        case BOOLEAN -> w.write(row.getBoolean(i), 0, d);
        case BYTE -> w.write((int) row.getByte(i), 0, d);
        case SHORT -> w.write((int) row.getShort(i), 0, d);
        case INT -> w.write(row.getInt(i), 0, d);
        case LONG -> w.write(row.getLong(i), 0, d);
        case FLOAT -> w.write(row.getFloat(i), 0, d);
        case DOUBLE -> w.write(row.getDouble(i), 0, d);
        case STRING -> w.write(binary(row.getUTF8String(i)), 0, d);
        case BINARY -> w.write(Binary.fromReusedByteArray(row.getBinary(i)), 0, d);
        case DECIMAL_INT -> w.write((int) row.getDecimal(i, precision[i], scale[i]).toUnscaledLong(), 0, d);
        default -> w.write(row.getDecimal(i, precision[i], scale[i]).toUnscaledLong(), 0, d);
      }
    }
    store.endRecord();
  }

  /** The string's bytes where they lie (the column writer copies what it keeps). */
  private static Binary binary(UTF8String s) {
    if (s.getBaseObject() instanceof byte[] bytes) {
      return Binary.fromReusedByteArray(bytes, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), s.numBytes());
    }
    return Binary.fromReusedByteArray(s.getBytes());
  }
}
