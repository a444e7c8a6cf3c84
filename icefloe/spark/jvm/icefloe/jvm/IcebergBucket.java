package icefloe.jvm;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * Iceberg's bucket transform as a Spark function run in the JVM tasks: the spec's 32-bit murmur3
 * (x86, seed 0) of a value's hash bytes, its sign bit cleared, modulo the bucket count. The hash
 * bytes (the table spec's Appendix B): integers, dates, times and timestamps as the 8 little-endian
 * bytes of a long (the caller gives the long: days, microseconds); strings as their UTF-8 bytes;
 * binary and fixed values as they are; decimals as the minimal big-endian two's complement bytes of
 * the unscaled value; UUIDs as their 16 big-endian bytes. A null has no bucket (null).
 */
public final class IcebergBucket {
  private IcebergBucket() {
  }

  /**
   * The bucket of each value of {@code value} among {@code buckets}; {@code kind} names the value's
   * form: {@code long}, {@code string}, {@code binary}, {@code decimal} (of scale {@code scale}) or
   * {@code uuid} (its text).
   */
  public static Column of(Column value, String kind, int buckets, int scale) {
    if (buckets <= 0) {
      throw new IllegalArgumentException("a bucket transform needs a positive bucket count, got " + buckets);
    }
    UDF1<?, ?> f = switch (kind) {
      case "long" -> new OfLong(buckets);
      case "string" -> new OfString(buckets);
      case "binary" -> new OfBinary(buckets);
      case "decimal" -> new OfDecimal(buckets, scale);
      case "uuid" -> new OfUuid(buckets);
      default -> throw new IllegalArgumentException("no bucket function for values of kind " + kind);
    };
    return functions.udf(f, DataTypes.IntegerType).apply(value);
  }

  static int bucket(int hash, int buckets) {
    return (hash & Integer.MAX_VALUE) % buckets;
  }

  private static final class OfLong implements UDF1<Long, Integer> {
    private final int buckets;

    OfLong(int buckets) {
      this.buckets = buckets;
    }

    @Override
    public Integer call(Long v) {
      return v == null ? null : bucket(Murmur3.hashLong(v, 0), buckets);
    }
  }

  private static final class OfString implements UDF1<String, Integer> {
    private final int buckets;

    OfString(int buckets) {
      this.buckets = buckets;
    }

    @Override
    public Integer call(String v) {
      return v == null ? null : bucket(Murmur3.hash(v.getBytes(StandardCharsets.UTF_8), 0), buckets);
    }
  }

  private static final class OfBinary implements UDF1<byte[], Integer> {
    private final int buckets;

    OfBinary(int buckets) {
      this.buckets = buckets;
    }

    @Override
    public Integer call(byte[] v) {
      return v == null ? null : bucket(Murmur3.hash(v, 0), buckets);
    }
  }

  private static final class OfDecimal implements UDF1<BigDecimal, Integer> {
    private final int buckets;
    private final int scale;

    OfDecimal(int buckets, int scale) {
      this.buckets = buckets;
      this.scale = scale;
    }

    @Override
    public Integer call(BigDecimal v) {
      if (v == null) {
        return null;
      }
      return bucket(Murmur3.hash(v.setScale(scale, RoundingMode.UNNECESSARY).unscaledValue().toByteArray(), 0),
          buckets);
    }
  }

  private static final class OfUuid implements UDF1<String, Integer> {
    private final int buckets;

    OfUuid(int buckets) {
      this.buckets = buckets;
    }

    @Override
    public Integer call(String v) {
      if (v == null) {
        return null;
      }
      UUID u = UUID.fromString(v);
      byte[] bytes = new byte[16];
      long hi = u.getMostSignificantBits();
      long lo = u.getLeastSignificantBits();
      for (int i = 0; i < 8; i++) {
        bytes[i] = (byte) (hi >>> (56 - 8 * i));
        bytes[8 + i] = (byte) (lo >>> (56 - 8 * i));
      }
      return bucket(Murmur3.hash(bytes, 0), buckets);
    }
  }
}
