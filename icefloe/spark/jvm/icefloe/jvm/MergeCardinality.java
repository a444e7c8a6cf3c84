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
 * target row that more than one source row matches fails that job. The join streams the target
 * (the source is broadcast), so the matches of one target row are produced one after another in
 * the task that reads it; each task's instance of the check remembers the last target row it saw
 * (its data file and position) and fails on a repeat. The failure's message starts with
 * {@link #MARK}, then the file and the position, separated by a NUL, for the driver to name the row.
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
    UserDefinedFunction f = functions.udf(new Once(), DataTypes.BooleanType).asNondeterministic();
    return f.apply(file, pos, source);
  }

  /**
   * As {@link #check}, for a join whose task sees every match of a target row but not one after
   * another (a shuffled join on equal keys, the target on its preserved side): each task's instance
   * keeps the positions it has matched, per data file, and fails on one matched again.
   */
  public static Column checkEach(Column file, Column pos, Column source) {
    UserDefinedFunction f = functions.udf(new Each(), DataTypes.BooleanType).asNondeterministic();
    return f.apply(file, pos, source);
  }

  private static IllegalStateException repeated(String file, long pos) {
    return new IllegalStateException(MARK + file + "\u0000" + pos);
  }

  private static final class Each implements UDF3<String, Long, Object, Boolean> {
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
        throw repeated(file, pos);
      }
      last.addLong(pos);
      return Boolean.TRUE;
    }
  }

  private static final class Once implements UDF3<String, Long, Object, Boolean> {
    private String lastFile;
    private long lastPos = -1;

    @Override
    public Boolean call(String file, Long pos, Object source) {
      if (file == null || pos == null) {
        return Boolean.TRUE;
      }
      if (pos == lastPos && file.equals(lastFile)) {
        throw repeated(file, pos);
      }
      lastFile = file;
      lastPos = pos;
      return Boolean.TRUE;
    }
  }
}
