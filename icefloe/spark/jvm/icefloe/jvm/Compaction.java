package icefloe.jvm;

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
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
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * Moves a batch's kept rows down to the front of the reader's own vectors (row {@code kept[k]} to
 * row {@code k}; {@code kept} ascends, so every row is read before it is overwritten), from the
 * first row that moves ({@code from}: the rows before it are kept where they are). The reader
 * rewrites its vectors for each batch, so nothing outlives the batch. Values of variable length
 * (strings, binaries, arrays, maps) move as their offset and length; dictionary-encoded columns move
 * their ids. Returns false, changing nothing, for a vector it cannot rewrite (a constant, an
 * unhandled type); the caller then reads that vector through a selection.
 */
final class Compaction {
  private Compaction() {
  }

  static boolean compact(ColumnVector vector, int[] kept, int from, int count) {
    if (!(vector instanceof WritableColumnVector) || !canCompact((WritableColumnVector) vector)) {
      return false;
    }
    move((WritableColumnVector) vector, kept, from, count);
    return true;
  }

  /** As {@link #compact}, the kept rows given as {@code runs} of consecutive rows, {@code [n, source,
   * destination, length, ...]} for n runs: each moved by one array copy per array of an on-heap
   * vector (deletes are mostly sparse: a batch's kept rows are a few long runs) rather than a value
   * at a time. False, changing nothing, for any other vector (the caller moves it by {@link #compact}). */
  static boolean compactRuns(ColumnVector vector, int[] runs) {
    return vector instanceof WritableColumnVector && canCompact((WritableColumnVector) vector)
        && moveRuns((WritableColumnVector) vector, runs);
  }

  // Spark's on-heap vector keeps its values in arrays: a run moves as one copy within each
  private static final java.lang.reflect.Field[] ON_HEAP = onHeapFields("nulls", "byteData", "shortData", "intData",
      "longData", "floatData", "doubleData", "arrayOffsets", "arrayLengths");

  private static java.lang.reflect.Field[] onHeapFields(String... names) {
    java.lang.reflect.Field[] out = new java.lang.reflect.Field[names.length];
    try {
      for (int i = 0; i < names.length; i++) {
        out[i] = OnHeapColumnVector.class.getDeclaredField(names[i]);
        out[i].setAccessible(true);
      }
      return out;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;        // another Spark: values move one at a time
    }
  }

  /** The arrays (by {@link #ON_HEAP} index) holding the values of an on-heap vector of this type, or
   * null when they are not known here (the caller moves values one at a time). */
  private static int[] valueArrays(DataType t) {
    if (t instanceof BooleanType || t instanceof ByteType) {
      return new int[] {1};
    } else if (t instanceof ShortType) {
      return new int[] {2};
    } else if (t instanceof IntegerType || t instanceof DateType
        || (t instanceof DecimalType && ((DecimalType) t).precision() <= 9)) {
      return new int[] {3};
    } else if (t instanceof LongType || t instanceof TimestampType || t instanceof TimestampNTZType
        || (t instanceof DecimalType && ((DecimalType) t).precision() <= 18)) {
      return new int[] {4};
    } else if (t instanceof FloatType) {
      return new int[] {5};
    } else if (t instanceof DoubleType) {
      return new int[] {6};
    } else if (t instanceof StringType || t instanceof BinaryType) {
      return new int[] {7, 8};
    }
    return null;
  }

  /** Moves the runs within an on-heap vector's own arrays (its nulls, and its values or, when
   * dictionary-encoded, its ids); false, having changed nothing, for any other vector. */
  private static boolean moveRuns(WritableColumnVector v, int[] runs) {
    if (ON_HEAP == null || v.getClass() != OnHeapColumnVector.class) {
      return false;
    }
    if (v.isAllNull()) {
      return true;
    }
    WritableColumnVector values = v.hasDictionary() ? v.getDictionaryIds() : v;
    int[] which = v.hasDictionary() ? new int[] {3} : valueArrays(v.dataType());
    if (which == null || values.getClass() != OnHeapColumnVector.class) {
      return false;
    }
    try {
      Object[] arrays = new Object[which.length + 1];
      for (int i = 0; i < which.length; i++) {
        arrays[i] = ON_HEAP[which[i]].get(values);
        if (arrays[i] == null) {
          return false;
        }
      }
      arrays[which.length] = v.hasNull() ? ON_HEAP[0].get(v) : null;
      for (Object array : arrays) {
        if (array == null) {
          continue;
        }
        for (int r = 0; r < runs[0]; r++) {
          System.arraycopy(array, runs[1 + 3 * r], array, runs[2 + 3 * r], runs[3 + 3 * r]);
        }
      }
      return true;
    } catch (IllegalAccessException e) {
      return false;
    }
  }

  private static boolean canCompact(WritableColumnVector v) {
    return v.isAllNull() || v.hasDictionary() || canCompact(v.dataType());
  }

  /** Whether the reader's vectors of this type can be rewritten in place (all of its fields too). */
  static boolean canCompact(DataType t) {
    if (t instanceof StructType) {
      for (org.apache.spark.sql.types.StructField f : ((StructType) t).fields()) {
        if (!canCompact(f.dataType())) {
          return false;
        }
      }
      return true;
    }
    return t instanceof BooleanType || t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
        || t instanceof DateType || t instanceof LongType || t instanceof TimestampType
        || t instanceof TimestampNTZType || t instanceof FloatType || t instanceof DoubleType
        || t instanceof DecimalType || t instanceof StringType || t instanceof BinaryType
        || t instanceof ArrayType || t instanceof MapType;
  }

  private static void move(WritableColumnVector v, int[] kept, int from, int count) {
    if (v.isAllNull()) {
      return;
    }
    boolean nulls = v.hasNull();
    if (nulls) {
      for (int k = from; k < count; k++) {
        if (v.isNullAt(kept[k])) {
          v.putNull(k);
        } else {
          v.putNotNull(k);
        }
      }
    }
    if (v.hasDictionary()) {
      WritableColumnVector ids = v.getDictionaryIds();
      for (int k = from; k < count; k++) {
        ids.putInt(k, ids.getInt(kept[k]));
      }
      return;
    }
    DataType t = v.dataType();
    if (t instanceof StructType) {
      for (int i = 0; i < ((StructType) t).length(); i++) {
        move(v.getChild(i), kept, from, count);
      }
    } else if (t instanceof BooleanType) {
      for (int k = from; k < count; k++) {
        v.putBoolean(k, v.getBoolean(kept[k]));
      }
    } else if (t instanceof ByteType) {
      for (int k = from; k < count; k++) {
        v.putByte(k, v.getByte(kept[k]));
      }
    } else if (t instanceof ShortType) {
      for (int k = from; k < count; k++) {
        v.putShort(k, v.getShort(kept[k]));
      }
    } else if (t instanceof IntegerType || t instanceof DateType
        || (t instanceof DecimalType && ((DecimalType) t).precision() <= 9)) {
      for (int k = from; k < count; k++) {
        v.putInt(k, v.getInt(kept[k]));
      }
    } else if (t instanceof LongType || t instanceof TimestampType || t instanceof TimestampNTZType
        || (t instanceof DecimalType && ((DecimalType) t).precision() <= 18)) {
      for (int k = from; k < count; k++) {
        v.putLong(k, v.getLong(kept[k]));
      }
    } else if (t instanceof FloatType) {
      for (int k = from; k < count; k++) {
        v.putFloat(k, v.getFloat(kept[k]));
      }
    } else if (t instanceof DoubleType) {
      for (int k = from; k < count; k++) {
        v.putDouble(k, v.getDouble(kept[k]));
      }
    } else {        // strings, binaries, wide decimals, arrays, maps: offset and length
      for (int k = from; k < count; k++) {
        int src = kept[k];
        v.putArray(k, v.getArrayOffset(src), v.getArrayLength(src));
      }
    }
  }
}
