package icefloe.jvm;

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
