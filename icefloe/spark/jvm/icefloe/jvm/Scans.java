package icefloe.jvm;

import java.io.FileNotFoundException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap$;
import org.apache.spark.sql.errors.QueryCompilationErrors;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A file scan built in one call from Python. Building the same DataFrame through PySpark's reader
 * takes a round trip per option, per path and for the schema (about twenty for ten files), and
 * Spark's own relation for a list of paths globs, lists and infers partitions; planning a table's
 * read is otherwise a few milliseconds, so those were most of it.
 *
 * <p>Lists travel as one string, their items separated by NUL, which neither a path nor an option
 * can hold.
 */
public final class Scans {
  static final String SEP = "\u0000";

  private Scans() {
  }

  /**
   * {@code spark.read.format(format).options(options).schema(schema).load(paths)}, for a table's
   * files: {@code format} is {@code parquet} or a {@code FileFormat} class's name, {@code options}
   * alternates keys and values, {@code schemaJson} is the schema as Spark's JSON. The relation is
   * built on the files themselves ({@link KnownFiles}): each is looked up once, a missing one is
   * Spark's {@code PATH_NOT_FOUND} error as its reader gives it, and nothing is globbed, listed or
   * inferred.
   */
  @SuppressWarnings("unchecked")
  public static Dataset<Row> load(SparkSession spark, String format, String options, String schemaJson,
      String paths) throws Exception {
    Map<String, String> map = new HashMap<>();
    if (!options.isEmpty()) {
      String[] kv = options.split(SEP, -1);
      if (kv.length % 2 != 0) {
        throw new IllegalArgumentException("options must pair keys with values");
      }
      for (int i = 0; i < kv.length; i += 2) {
        map.put(kv[i], kv[i + 1]);
      }
    }
    scala.collection.immutable.Map<String, String> opts = CaseInsensitiveMap$.MODULE$.apply(
        (scala.collection.immutable.Map<String, String>) scala.collection.immutable.Map$.MODULE$.from(
            CollectionConverters.asScala(map)));
    Configuration conf = spark.sessionState().newHadoopConfWithOptions(opts);
    String[] names = paths.split(SEP, -1);
    FileStatus[] files = new FileStatus[names.length];
    for (int i = 0; i < names.length; i++) {
      Path path = new Path(names[i]);
      try {
        files[i] = path.getFileSystem(conf).getFileStatus(path);
      } catch (FileNotFoundException e) {
        throw (Exception) QueryCompilationErrors.dataPathNotExistError(names[i]);
      }
    }
    FileFormat fileFormat = "parquet".equals(format) ? new ParquetFileFormat()
        : (FileFormat) Class.forName(format, true, Thread.currentThread().getContextClassLoader())
            .getDeclaredConstructor().newInstance();
    HadoopFsRelation relation = new HadoopFsRelation(new KnownFiles(files), new StructType(),
        (StructType) DataType.fromJson(schemaJson), scala.Option.empty(), fileFormat, opts, spark);
    return spark.baseRelationToDataFrame(relation);
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
