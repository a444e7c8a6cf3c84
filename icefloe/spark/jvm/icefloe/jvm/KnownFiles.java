package icefloe.jvm;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.types.StructType;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The files of a table's scan, as its plan names them: a file index that lists nothing. Spark's own
 * index for a list of paths globs each one, lists it and infers partitions from the directories,
 * which for a table's files (never a pattern, partition values not in the path) is only cost: about
 * 20 ms of each read's planning. One partition directory, no partition columns.
 */
final class KnownFiles implements FileIndex {
  private final FileStatus[] files;
  private final Seq<Path> roots;
  private final long size;

  KnownFiles(FileStatus[] files) {
    this.files = files;
    List<Path> paths = new ArrayList<>(files.length);
    long total = 0;
    for (FileStatus f : files) {
      paths.add(f.getPath());
      total += f.getLen();
    }
    this.roots = CollectionConverters.asScala(paths).toSeq();
    this.size = total;
  }

  @Override
  public Seq<Path> rootPaths() {
    return roots;
  }

  @Override
  public Seq<PartitionDirectory> listFiles(Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
    List<PartitionDirectory> one = new ArrayList<>(1);
    one.add(PartitionDirectory.apply(InternalRow.empty(), files));
    return CollectionConverters.asScala(one).toSeq();
  }

  @Override
  public String[] inputFiles() {
    String[] out = new String[files.length];
    for (int i = 0; i < files.length; i++) {
      out[i] = files[i].getPath().toString();
    }
    return out;
  }

  @Override
  public void refresh() {
  }

  @Override
  public long sizeInBytes() {
    return size;
  }

  @Override
  public StructType partitionSchema() {
    return new StructType();
  }
}
