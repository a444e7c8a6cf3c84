package icefloe.jvm;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
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

  /** A bucket function of one value form: the bucket of a value's hash, null for a null. */
  private abstract static class Bucketing<T> implements UDF1<T, Integer> {
    private final int buckets;

    Bucketing(int buckets) {
      this.buckets = buckets;
    }

    /** The spec's hash of a value (not null). */
    abstract int hash(T v);

    @Override
    public Integer call(T v) {
      return v == null ? null : bucket(hash(v), buckets);
    }
  }

  private static final class OfLong extends Bucketing<Long> {
    OfLong(int buckets) {
      super(buckets);
    }

    @Override
    int hash(Long v) {
      return Murmur3.hashLong(v, 0);
    }
  }

  private static final class OfString extends Bucketing<String> {
    OfString(int buckets) {
      super(buckets);
    }

    @Override
    int hash(String v) {
      return Murmur3.hash(v.getBytes(StandardCharsets.UTF_8), 0);
    }
  }

  private static final class OfBinary extends Bucketing<byte[]> {
    OfBinary(int buckets) {
      super(buckets);
    }

    @Override
    int hash(byte[] v) {
      return Murmur3.hash(v, 0);
    }
  }

  private static final class OfDecimal extends Bucketing<BigDecimal> {
    private final int scale;

    OfDecimal(int buckets, int scale) {
      super(buckets);
      this.scale = scale;
    }

    @Override
    int hash(BigDecimal v) {
      return Murmur3.hash(v.setScale(scale, RoundingMode.UNNECESSARY).unscaledValue().toByteArray(), 0);
    }
  }

  private static final class OfUuid extends Bucketing<String> {
    OfUuid(int buckets) {
      super(buckets);
    }

    @Override
    int hash(String v) {
      UUID u = UUID.fromString(v);
      return Murmur3.hash(ByteBuffer.allocate(16).putLong(u.getMostSignificantBits())
          .putLong(u.getLeastSignificantBits()).array(), 0);      // big-endian, as the spec hashes it
    }
  }
}
