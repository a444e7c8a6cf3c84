package icefloe.jvm;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.ShuffleQueryStageExec;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.FileScanRDD;
import org.apache.spark.sql.execution.datasources.PartitionedFile;

/**
 * Whether a DataFrame's rows reach its tasks as one file scan reads them: each task holding every
 * row of each file it reads, a file's rows in the order of their positions. A change's rows that
 * arrive so are already what its writers need (a data file's positions together, ascending, in one
 * task), and need no exchange to cluster them.
 */
public final class ScanOrder {
  private ScanOrder() {
  }

  /**
   * True when the physical plan of {@code rows} is one file scan under projections and filters
   * only, and no file of the scan is cut into ranges read by different tasks.
   */
  public static boolean keepsFilesWhole(Dataset<Row> rows) {
    SparkPlan plan = rows.queryExecution().executedPlan();
    while (true) {
      if (plan instanceof WholeStageCodegenExec) {
        plan = ((WholeStageCodegenExec) plan).child();
      } else if (plan instanceof InputAdapter) {
        plan = ((InputAdapter) plan).child();
      } else if (plan instanceof ProjectExec) {
        plan = ((ProjectExec) plan).child();
      } else if (plan instanceof FilterExec) {
        plan = ((FilterExec) plan).child();
      } else if (plan instanceof ColumnarToRowExec) {
        plan = ((ColumnarToRowExec) plan).child();
      } else if (plan instanceof FileSourceScanExec) {
        return wholeFiles(((FileSourceScanExec) plan).inputRDD());
      } else {
        return false;
      }
    }
  }

  /**
   * True when no shuffle lies between {@code rows} and the scans they come from: each task's rows
   * are those of the file ranges it reads (projected, filtered, joined to broadcast tables), as
   * the scan gives them.
   */
  public static boolean withoutShuffle(Dataset<Row> rows) {
    SparkPlan plan = rows.queryExecution().executedPlan();
    return !shuffles(plan);
  }

  private static boolean shuffles(SparkPlan plan) {
    if (plan instanceof ShuffleExchangeLike || plan instanceof ShuffleQueryStageExec) {
      return true;
    }
    if (plan instanceof AdaptiveSparkPlanExec) {     // its current plan, exchanges in place
      return shuffles(((AdaptiveSparkPlanExec) plan).executedPlan());
    }
    scala.collection.Iterator<SparkPlan> children = plan.children().iterator();
    while (children.hasNext()) {
      if (shuffles(children.next())) {
        return true;
      }
    }
    return false;
  }

  private static boolean wholeFiles(RDD<?> rdd) {
    if (!(rdd instanceof FileScanRDD)) {
      return false;
    }
    scala.collection.Iterator<FilePartition> parts = ((FileScanRDD) rdd).filePartitions().iterator();
    while (parts.hasNext()) {
      for (PartitionedFile f : parts.next().files()) {
        if (f.start() != 0 || f.length() != f.fileSize()) {
          return false;
        }
      }
    }
    return true;
  }
}
