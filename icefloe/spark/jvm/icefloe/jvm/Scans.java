package icefloe.jvm;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * A file scan built in one call from Python. Building the same DataFrame through PySpark's reader
 * takes a round trip per option, per path and for the schema (about twenty for ten files); planning a
 * table's read is otherwise a few milliseconds, so those trips were most of it.
 *
 * <p>Lists travel as one string, their items separated by NUL, which neither a path nor an option
 * can hold.
 */
public final class Scans {
  static final String SEP = "\u0000";

  private Scans() {
  }

  /**
   * {@code spark.read.format(format).options(options).schema(schema).load(paths)}; {@code options}
   * alternates keys and values, {@code schemaJson} is the schema as Spark's JSON.
   */
  public static Dataset<Row> load(SparkSession spark, String format, String options, String schemaJson,
      String paths) {
    DataFrameReader reader = spark.read().format(format);
    if (!options.isEmpty()) {
      String[] kv = options.split(SEP, -1);
      if (kv.length % 2 != 0) {
        throw new IllegalArgumentException("options must pair keys with values");
      }
      Map<String, String> map = new HashMap<>();
      for (int i = 0; i < kv.length; i += 2) {
        map.put(kv[i], kv[i + 1]);
      }
      reader = reader.options(map);
    }
    reader = reader.schema((StructType) DataType.fromJson(schemaJson));
    return reader.load(paths.split(SEP, -1));
  }

  /**
   * Sets each of the session's settings ({@code settings} alternates keys and values) that differs,
   * in one call; returns the keys it could not set (static settings of a running session), separated
   * by NUL.
   */
  public static String ensureConf(SparkSession spark, String settings) {
    String[] kv = settings.split(SEP, -1);
    StringBuilder refused = new StringBuilder();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      String now = spark.conf().get(kv[i], null);
      if (!kv[i + 1].equals(now)) {
        try {
          spark.conf().set(kv[i], kv[i + 1]);
        } catch (Exception e) {         // a static setting of a running session (AnalysisException)
          if (refused.length() > 0) {
            refused.append(SEP);
          }
          refused.append(kv[i]);
        }
      }
    }
    return refused.toString();
  }
}
