package icefloe.jvm;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.roaringbitmap.longlong.Roaring64Bitmap;

/**
 * SQL's MERGE cardinality rule checked inside the job that joins the target with the source: a
 * target row that more than one source row matches fails that job. The caller uses it only where
 * every match of one target row is made in the task that reads the row (the source broadcast past
 * the streamed target, or a shuffled join keeping the target on its preserved side); each task's
 * instance of the check keeps the positions it has matched, per data file, in Roaring bitmaps and
 * fails on a position matched again. The failure's message starts with {@link #MARK}, then the
 * file and the position, separated by a NUL, for the driver to name the row.
 */
public final class MergeCardinality {
  /** What the message of a failed check starts with. */
  public static final String MARK = "icefloe-merge-cardinality:";

  private MergeCardinality() {
  }

  /**
   * A condition that is true on every matched row and fails its task on the second match of one
   * target row. {@code source} (a source column) keeps the condition above the join: it cannot be
   * pushed into the target's scan, where every row appears once.
   */
  public static Column check(Column file, Column pos, Column source) {
    UserDefinedFunction f = functions.udf(new Seen(), DataTypes.BooleanType).asNondeterministic();
    return f.apply(file, pos, source);
  }

  private static final class Seen implements UDF3<String, Long, Object, Boolean> {
    private final Map<String, Roaring64Bitmap> seen = new HashMap<>();
    private String lastFile;
    private Roaring64Bitmap last;

    @Override
    public Boolean call(String file, Long pos, Object source) {
      if (file == null || pos == null) {
        return Boolean.TRUE;
      }
      if (!file.equals(lastFile)) {
        last = seen.computeIfAbsent(file, k -> new Roaring64Bitmap());
        lastFile = file;
      }
      if (last.contains(pos)) {
        throw new IllegalStateException(MARK + file + "\u0000" + pos);
      }
      last.addLong(pos);
      return Boolean.TRUE;
    }
  }
}
