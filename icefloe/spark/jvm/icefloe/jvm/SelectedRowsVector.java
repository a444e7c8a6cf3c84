package icefloe.jvm;

import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.CalendarInterval;
import org.apache.spark.unsafe.types.UTF8String;

/** A column vector's rows at the given positions, read through (nothing is copied). */
final class SelectedRowsVector extends ColumnVector {
  private final ColumnVector base;
  private final int[] rows;
  private ColumnVector[] children;

  SelectedRowsVector(ColumnVector base, int[] rows) {
    super(base.dataType());
    this.base = base;
    this.rows = rows;
  }

  @Override
  public void close() {
    // the reader owns and reuses the underlying vectors
  }

  @Override
  public boolean hasNull() {
    return base.hasNull();
  }

  @Override
  public int numNulls() {
    if (!base.hasNull()) {
      return 0;
    }
    int nulls = 0;
    for (int r : rows) {
      nulls += base.isNullAt(r) ? 1 : 0;
    }
    return nulls;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return base.isNullAt(rows[rowId]);
  }

  @Override
  public boolean getBoolean(int rowId) {
    return base.getBoolean(rows[rowId]);
  }

  @Override
  public byte getByte(int rowId) {
    return base.getByte(rows[rowId]);
  }

  @Override
  public short getShort(int rowId) {
    return base.getShort(rows[rowId]);
  }

  @Override
  public int getInt(int rowId) {
    return base.getInt(rows[rowId]);
  }

  @Override
  public long getLong(int rowId) {
    return base.getLong(rows[rowId]);
  }

  @Override
  public float getFloat(int rowId) {
    return base.getFloat(rows[rowId]);
  }

  @Override
  public double getDouble(int rowId) {
    return base.getDouble(rows[rowId]);
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    return base.getArray(rows[rowId]);
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    return base.getMap(rows[rowId]);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    return base.getDecimal(rows[rowId], precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    return base.getUTF8String(rows[rowId]);
  }

  @Override
  public byte[] getBinary(int rowId) {
    return base.getBinary(rows[rowId]);
  }

  @Override
  public CalendarInterval getInterval(int rowId) {
    return base.getInterval(rows[rowId]);
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    if (children == null) {
      children = new ColumnVector[64];
    }
    if (ordinal >= children.length) {
      children = java.util.Arrays.copyOf(children, ordinal + 1);
    }
    if (children[ordinal] == null) {
      children[ordinal] = new SelectedRowsVector(base.getChild(ordinal), rows);
    }
    return children[ordinal];
  }
}
