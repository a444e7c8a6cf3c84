package icefloe.jvm;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * Paimon's fixed-bucket function as a Spark function run in the JVM tasks: the bucket-key fields of
 * a row laid out as Paimon's BinaryRow, its hash code (MurmurHash3 x86 32-bit over the row's 4-byte
 * little-endian words, seed 42, the byte length mixed in last), and {@code abs(hash % buckets)}.
 *
 * <p>The row: a header of 8-byte words (byte 0 the row kind, 0 for an insert; then one null bit per
 * field, from bit 8), an 8-byte slot per field, then the variable-length part in 8-byte words.
 * Fixed-width values sit in their slot (little-endian). A string or binary of at most 7 bytes sits
 * in its slot with its length in the slot's last byte (high bit set); a longer one goes to the
 * variable part, the slot holding its offset (high 32 bits) and length. A decimal of precision at
 * most 18 is its unscaled long; a wider one is the minimal big-endian bytes of its unscaled value in
 * 16 reserved bytes. A timestamp of precision at most 3 is its epoch milliseconds; a finer one is
 * the milliseconds in 8 reserved bytes, the slot holding the offset and the nanoseconds of the
 * millisecond. The wide decimals and fine timestamps reserve their bytes even when null. Each input
 * field arrives in a Spark form: dates as epoch days, timestamps as epoch microseconds.
 */
public final class PaimonBucket {
  static final int BOOLEAN = 0, BYTE = 1, SHORT = 2, INT = 3, LONG = 4, FLOAT = 5, DOUBLE = 6, STRING = 7,
      BINARY = 8, DECIMAL = 9, TIMESTAMP = 10;
  private static final String[] NAMES = {"boolean", "byte", "short", "int", "long", "float", "double", "string",
      "binary", "decimal", "timestamp"};

  private PaimonBucket() {
  }

  /**
   * The bucket among {@code buckets} of each row of {@code keys} (a struct of the bucket-key fields);
   * per field, {@code kinds} names its form ({@code boolean byte short int long float double string
   * binary decimal timestamp}) and {@code precisions}/{@code scales} its decimal or timestamp type.
   */
  public static Column of(Column keys, String[] kinds, int[] precisions, int[] scales, int buckets) {
    if (buckets <= 0) {
      throw new IllegalArgumentException("a fixed-bucket table needs bucket > 0, got " + buckets);
    }
    int[] codes = new int[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      codes[i] = java.util.Arrays.asList(NAMES).indexOf(kinds[i]);
      if (codes[i] < 0) {
        throw new IllegalArgumentException("no BinaryRow form for values of kind " + kinds[i]);
      }
    }
    return functions.udf(new Of(codes, precisions.clone(), scales.clone(), buckets), DataTypes.IntegerType)
        .asNonNullable().apply(keys);
  }

  private static final class Of implements UDF1<Row, Integer> {
    private final int[] kinds;
    private final int[] precisions;
    private final int[] scales;
    private final int buckets;

    Of(int[] kinds, int[] precisions, int[] scales, int buckets) {
      this.kinds = kinds;
      this.precisions = precisions;
      this.scales = scales;
      this.buckets = buckets;
    }

    @Override
    public Integer call(Row row) {
      return Math.abs(Murmur3.hash(encode(row), 42) % buckets);      // a BinaryRow: whole words
    }

    private byte[] encode(Row row) {
      int arity = kinds.length;
      int header = (arity + 63 + 8) / 64 * 8;
      int fixed = header + 8 * arity;
      int var = 0;
      byte[][] raws = new byte[arity][];
      for (int i = 0; i < arity; i++) {         // the variable part's size
        boolean isNull = row.isNullAt(i);
        switch (kinds[i]) {
          case STRING, BINARY -> {
            if (!isNull) {
              raws[i] = bytes(row, i);
              int n = raws[i].length;
              var += n <= 7 ? 0 : (n + 7) & ~7;
            }
          }
          case DECIMAL -> var += precisions[i] <= 18 ? 0 : 16;
          case TIMESTAMP -> var += precisions[i] <= 3 ? 0 : 8;
          default -> { }
        }
      }
      ByteBuffer out = ByteBuffer.allocate(fixed + var).order(ByteOrder.LITTLE_ENDIAN);
      int next = fixed;
      for (int i = 0; i < arity; i++) {
        int slot = header + 8 * i;
        boolean isNull = row.isNullAt(i);
        if (isNull) {
          markNull(out, i);
        }
        switch (kinds[i]) {
          case BOOLEAN -> out.put(slot, (byte) (!isNull && row.getBoolean(i) ? 1 : 0));
          case BYTE -> out.put(slot, isNull ? 0 : row.getByte(i));
          case SHORT -> out.putShort(slot, isNull ? 0 : row.getShort(i));
          case INT -> out.putInt(slot, isNull ? 0 : row.getInt(i));
          case LONG -> out.putLong(slot, isNull ? 0 : row.getLong(i));
          case FLOAT -> out.putInt(slot, isNull ? 0 : Float.floatToIntBits(row.getFloat(i)));
          case DOUBLE -> out.putLong(slot, isNull ? 0 : Double.doubleToLongBits(row.getDouble(i)));
          case STRING, BINARY -> {
            if (!isNull) {
              byte[] raw = raws[i];
              if (raw.length <= 7) {
                out.put(slot, raw, 0, raw.length);      // absolute bulk put (Java 16+)
                out.put(slot + 7, (byte) (0x80 | raw.length));
              } else {
                out.put(next, raw, 0, raw.length);
                out.putLong(slot, (long) next << 32 | raw.length);
                next += (raw.length + 7) & ~7;
              }
            }
          }
          case DECIMAL -> {
            BigDecimal d = isNull ? null : row.getDecimal(i);
            java.math.BigInteger unscaled = d == null ? null
                : d.setScale(scales[i], RoundingMode.HALF_UP).unscaledValue();
            if (unscaled != null && unscaled.abs().toString().length() > precisions[i] && unscaled.signum() != 0) {
              unscaled = null;          // beyond the precision: stored as null, as Paimon does
              markNull(out, i);
            }
            if (precisions[i] <= 18) {
              out.putLong(slot, unscaled == null ? 0 : unscaled.longValueExact());
            } else {
              byte[] raw = unscaled == null ? new byte[0] : unscaled.toByteArray();
              out.put(next, raw, 0, raw.length);
              out.putLong(slot, (long) next << 32 | raw.length);
              next += 16;
            }
          }
          case TIMESTAMP -> {
            long micros = isNull ? 0 : row.getLong(i);
            long millis = Math.floorDiv(micros, 1000L);
            if (precisions[i] <= 3) {
              out.putLong(slot, isNull ? 0 : millis);
            } else {
              if (!isNull) {
                out.putLong(next, millis);
              }
              out.putLong(slot, (long) next << 32 | (isNull ? 0 : Math.floorMod(micros, 1000L) * 1000L));
              next += 8;
            }
          }
          default -> throw new IllegalStateException("kind " + kinds[i]);
        }
      }
      return out.array();
    }

    /** Field {@code i}'s null bit (bit {@code i + 8} of the header: byte 0 is the row kind). */
    private static void markNull(ByteBuffer row, int i) {
      int bit = i + 8;
      row.put(bit / 8, (byte) (row.get(bit / 8) | (1 << (bit % 8))));
    }

    private static byte[] bytes(Row row, int i) {
      Object v = row.get(i);
      return v instanceof byte[] b ? b : ((String) v).getBytes(StandardCharsets.UTF_8);
    }
  }
}
