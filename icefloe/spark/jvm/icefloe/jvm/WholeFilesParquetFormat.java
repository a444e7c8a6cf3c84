package icefloe.jvm;

import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;

/**
 * Spark's Parquet format, except that the files named in the option {@link #OPTION} are each read
 * by one task. Spark cuts a file into byte ranges and a range reads the row groups whose middle it
 * holds, so a file of one row group cut in two gives one task all of its rows and another nothing
 * but the footer to read; the table's metadata (Iceberg's split offsets) says which files are like
 * that, and those are left whole. Files not named are split as Spark would.
 */
public class WholeFilesParquetFormat extends ParquetFileFormat {
  /** The keys ({@link DeletedRowsParquetFormat#key}) of the files to read whole, one per line. */
  public static final String OPTION = "icefloe.whole-files";

  private transient Set<String> whole;
  private transient String wholeSpec;

  @Override
  public String shortName() {
    return "icefloe-parquet-whole";
  }

  @Override
  public String toString() {
    return "Parquet";
  }

  @Override
  public boolean isSplitable(SparkSession spark, scala.collection.immutable.Map<String, String> options,
      Path path) {
    String spec = options.get(OPTION).getOrElse(() -> "");
    if (spec.isEmpty()) {
      return super.isSplitable(spark, options, path);
    }
    return !wholeFiles(spec).contains(DeletedRowsParquetFormat.key(path.toString()));
  }

  private synchronized Set<String> wholeFiles(String spec) {
    if (!spec.equals(wholeSpec)) {     // planning asks once per file: parse the list once
      Set<String> out = new HashSet<>();
      for (String line : spec.split("\n")) {
        if (!line.isEmpty()) {
          out.add(DeletedRowsParquetFormat.key(line));
        }
      }
      whole = out;
      wholeSpec = spec;
    }
    return whole;
  }
}
