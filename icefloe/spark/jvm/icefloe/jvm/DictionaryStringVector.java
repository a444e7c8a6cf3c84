package icefloe.jvm;

import java.lang.reflect.Field;
import org.apache.parquet.column.Dictionary;
import org.apache.spark.sql.execution.datasources.parquet.ParquetDictionary;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.CalendarInterval;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A string column of Spark's Parquet reader whose dictionary-encoded values are each decoded once.
 *
 * <p>Spark keeps a dictionary-encoded column chunk as the values' dictionary ids and decodes a value
 * each time it is read: a copy of the entry's bytes and a new string per row. Here each entry of a
 * chunk's dictionary becomes one string the first time a row names it, and every later row naming
 * it gets that same string (strings are immutable). The reader sets a new dictionary wrapper on
 * the vector for every batch, over the same Parquet dictionary for a whole column chunk, so the
 * decoded entries are kept per Parquet dictionary. Values not dictionary-encoded (a chunk that
 * fell back to plain pages) are read from the vector as they are.
 */
public final class DictionaryStringVector extends ColumnVector {
  private static final Field VECTOR_DICTIONARY = field(WritableColumnVector.class, "dictionary");
  private static final Field PARQUET_DICTIONARY = field(ParquetDictionary.class, "dictionary");
  private static final Field NEEDS_TRANSFORM = field(ParquetDictionary.class, "needTransform");

  private ColumnVector base;
  private WritableColumnVector ids;     // the rows' dictionary ids; null when not decoded here
  private UTF8String[] entries;         // per id of the chunk's dictionary, once decoded
  private Dictionary dictionary;        // the column chunk's, whose entries are kept

  DictionaryStringVector(ColumnVector base) {
    super(base.dataType());
    reset(base);
  }

  private static Field field(Class<?> owner, String name) {
    try {
      Field f = owner.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;      // another Spark: values are read as Spark reads them
    }
  }

  /** Takes the batch's vector for this column (the reader's own, refilled for each batch). */
  void reset(ColumnVector vector) {
    base = vector;
    ids = null;
    Dictionary parquet = parquetDictionary(vector);
    if (parquet == null) {
      return;
    }
    if (parquet != dictionary) {        // a new column chunk: only its entries are kept
      dictionary = parquet;
      entries = new UTF8String[parquet.getMaxId() + 1];
    }
    ids = ((WritableColumnVector) vector).getDictionaryIds();
  }

  private static Dictionary parquetDictionary(ColumnVector vector) {
    if (VECTOR_DICTIONARY == null || PARQUET_DICTIONARY == null || NEEDS_TRANSFORM == null
        || !(vector instanceof WritableColumnVector) || !((WritableColumnVector) vector).hasDictionary()) {
      return null;
    }
    try {
      Object wrapper = VECTOR_DICTIONARY.get(vector);
      if (!(wrapper instanceof ParquetDictionary) || NEEDS_TRANSFORM.getBoolean(wrapper)) {
        return null;
      }
      return (Dictionary) PARQUET_DICTIONARY.get(wrapper);
    } catch (IllegalAccessException e) {
      return null;
    }
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (ids == null) {
      return base.getUTF8String(rowId);
    }
    if (base.isNullAt(rowId)) {
      return null;
    }
    int id = ids.getDictId(rowId);
    UTF8String s = entries[id];
    if (s == null) {
      s = UTF8String.fromBytes(dictionary.decodeToBinary(id).getBytes());
      entries[id] = s;
    }
    return s;
  }

  @Override
  public byte[] getBinary(int rowId) {
    return base.getBinary(rowId);
  }

  @Override
  public void close() {
    // the reader owns and reuses the underlying vector
  }

  @Override
  public boolean hasNull() {
    return base.hasNull();
  }

  @Override
  public int numNulls() {
    return base.numNulls();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return base.isNullAt(rowId);
  }

  @Override
  public boolean getBoolean(int rowId) {
    return base.getBoolean(rowId);
  }

  @Override
  public byte getByte(int rowId) {
    return base.getByte(rowId);
  }

  @Override
  public short getShort(int rowId) {
    return base.getShort(rowId);
  }

  @Override
  public int getInt(int rowId) {
    return base.getInt(rowId);
  }

  @Override
  public long getLong(int rowId) {
    return base.getLong(rowId);
  }

  @Override
  public float getFloat(int rowId) {
    return base.getFloat(rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return base.getDouble(rowId);
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    return base.getArray(rowId);
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    return base.getMap(rowId);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    return base.getDecimal(rowId, precision, scale);
  }

  @Override
  public CalendarInterval getInterval(int rowId) {
    return base.getInterval(rowId);
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    return base.getChild(ordinal);
  }
}
