package icefloe.jvm;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.SerializableConfiguration;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.RoaringBitmapWriter;

/**
 * The files of a merge-on-read change, written by the Spark tasks that receive its rows, with
 * Spark's own Parquet writer: no Python worker, no row leaves the JVM.
 *
 * <p>Each row holds the data columns of a row to write (the first columns, one per id of
 * {@code field-ids}, as the table stores them; written with those field ids), then a data file's
 * path, a position in it and the row's kind (an int). A row whose kind is one of {@code deleting}
 * and whose path is not null deletes that position; one whose kind is one of {@code writing} is
 * written to a new data file. The rows of a task arrive sorted by
 * path and position, each data file's in one task. A task writes one position delete file per data
 * file (Iceberg format v2, {@code file_path} and {@code pos} with the spec's field ids), or one Puffin
 * file holding a {@code deletion-vector-v1} blob per data file (v3), each vector the new positions
 * merged with the file's earlier deletes ({@code previous}, read as {@link DeleteSources} reads them);
 * its data files roll over at {@code max-records} rows. With {@code keyed}, a fourth column after the
 * kind names the partition of a row to write (``partition_key``): each partition's rows go to
 * their own data files, at most {@code MAX_OPEN} of them open in a task at once (the least recently
 * written one is closed to open another).
 *
 * <p>Each task answers one frame list (big-endian): {@code 'D'} a data file (path, size, footer),
 * {@code 'K'} a data file of a keyed write (path, size, footer, the partition key),
 * {@code 'P'} a position delete file (path, size, footer, the data file), {@code 'V'} a vector (the
 * Puffin file, its size, the data file, offset, length, cardinality), {@code 'C'} a count (data
 * file, kind, positions). A task that fails removes what it wrote; one that finishes after the job
 * failed elsewhere (the abort {@code marker} exists) removes its files and answers nothing. Every
 * file's name holds the job's id, so the driver can remove what a lost task left.
 */
public final class ChangeWriter {
  static final int DELETE_FILE_PATH_ID = 2147483546;
  static final int DELETE_POS_ID = 2147483545;
  static final int ROW_POSITION_ID = 2147483545;
  /** The data files a keyed task keeps open at once: each holds its row group's pages in memory. */
  static final int MAX_OPEN = 16;
  private static final byte[] PUFFIN_MAGIC = {'P', 'F', 'A', '1'};
  private static final byte[] VECTOR_MAGIC = {(byte) 0xD1, (byte) 0xD3, 0x39, 0x64};

  private ChangeWriter() {
  }

  /**
   * Runs the job over {@code rows} and returns every task's frames, concatenated. {@code settings}
   * holds lines of {@code key TAB value}: {@code job}, {@code data-dir}, {@code marker},
   * {@code field-ids} (the data columns' field ids), {@code deleting} and {@code writing} (kinds),
   * each comma-separated, {@code vectors} ({@code true} for deletion vectors), any number of
   * {@code data-option} and {@code delete-option} lines (each {@code name=value}: an option of Spark's
   * Parquet writer for the data files, or for the position delete files, such as {@code compression} or
   * {@code parquet.page.size}), {@code max-records}, {@code fail-at} (a test's fault: a task fails opening a file
   * whose name holds it), and any number of {@code previous} lines, each a {@link DeleteSources} line.
   */
  public static byte[] write(SparkSession spark, Dataset<Row> rows, String settings) throws IOException {
    Settings s = Settings.parse(settings);
    StructType schema = rows.schema();
    StructField[] dataFields = new StructField[s.dataColumns];
    for (int i = 0; i < s.dataColumns; i++) {
      StructField f = schema.fields()[i];
      dataFields[i] = new StructField(f.name(), f.dataType(), f.nullable(), fieldId(s.fieldIds[i]));
    }
    StructType dataSchema = new StructType(dataFields);
    Path target = new Path(s.dataDir);
    Writers data = s.dataColumns == 0 ? null : Writers.prepare(spark, s.dataOptions, dataSchema, target);
    Writers deletes = s.vectors ? null : Writers.prepare(spark, s.deleteOptions, positionDeleteSchema(), target);
    // local files through LocalFiles; a writer's settings serve the other files too (one conf less to ship)
    SerializableConfiguration conf = data != null ? data.conf : deletes != null ? deletes.conf
        : new SerializableConfiguration(Writers.writing(spark.sessionState().newHadoopConf(), target));
    // the settings of the writers travel once to each executor, not with every task
    Broadcast<Shared> shared = spark.sparkContext().broadcast(
        new Shared(data, deletes, conf), scala.reflect.ClassTag$.MODULE$.apply(Shared.class));
    Task task = new Task(s, shared);
    List<byte[]> answers;
    try {
      answers = rows.queryExecution().toRdd().toJavaRDD().mapPartitionsWithIndex(task, false).collect();
    } finally {
      shared.destroy();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] a : answers) {
      out.write(a, 0, a.length);
    }
    return out.toByteArray();
  }

  static StructType positionDeleteSchema() {
    return new StructType()
        .add("file_path", org.apache.spark.sql.types.DataTypes.StringType, false, fieldId(DELETE_FILE_PATH_ID))
        .add("pos", org.apache.spark.sql.types.DataTypes.LongType, false, fieldId(DELETE_POS_ID));
  }

  private static org.apache.spark.sql.types.Metadata fieldId(long id) {
    return new org.apache.spark.sql.types.MetadataBuilder().putLong("parquet.field.id", id).build();
  }

  /** The job's settings, parsed on the driver and shipped with the task. */
  static final class Settings implements Serializable {
    String job;
    String dataDir;
    String marker;
    int dataColumns;
    long[] fieldIds = new long[0];
    boolean[] deleting = new boolean[0];
    boolean[] writing = new boolean[0];
    boolean vectors;
    final HashMap<String, String> dataOptions = new HashMap<>();
    final HashMap<String, String> deleteOptions = new HashMap<>();
    long maxRecords = Long.MAX_VALUE;
    boolean keyed;
    String failAt;
    final HashMap<String, List<DeleteSources.Source>> previous = new HashMap<>();

    static Settings parse(String text) {
      Settings s = new Settings();
      for (String line : text.split("\n")) {
        int tab = line.indexOf('\t');
        if (tab < 0) {
          continue;
        }
        String key = line.substring(0, tab);
        String value = line.substring(tab + 1);
        switch (key) {
          case "job": s.job = value; break;
          case "data-dir": s.dataDir = value; break;
          case "marker": s.marker = value; break;
          case "field-ids": {
            String[] ids = value.isEmpty() ? new String[0] : value.split(",");
            s.fieldIds = new long[ids.length];
            for (int i = 0; i < ids.length; i++) {
              s.fieldIds[i] = Long.parseLong(ids[i]);
            }
            s.dataColumns = ids.length;
            break;
          }
          case "deleting": s.deleting = kinds(value); break;
          case "writing": s.writing = kinds(value); break;
          case "vectors": s.vectors = Boolean.parseBoolean(value); break;
          case "data-option": option(s.dataOptions, value); break;
          case "delete-option": option(s.deleteOptions, value); break;
          case "max-records": s.maxRecords = Math.max(1L, Long.parseLong(value)); break;
          case "fail-at": s.failAt = value; break;
          case "keyed": s.keyed = Boolean.parseBoolean(value); break;
          case "previous": {
            DeleteSources.Source src = DeleteSources.parse(value);
            if (src == null) {
              throw new IllegalArgumentException("not a source of deleted rows: " + value);
            }
            s.previous.computeIfAbsent(src.target, k -> new ArrayList<>()).add(src);
            break;
          }
          default:
            throw new IllegalArgumentException("unknown setting of a change write: " + key);
        }
      }
      if (s.job == null || s.dataDir == null || s.marker == null) {
        throw new IllegalArgumentException("a change write needs its job, data directory and abort marker");
      }
      return s;
    }

    private static void option(Map<String, String> into, String value) {
      int eq = value.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("not an option of a change write (name=value): " + value);
      }
      into.put(value.substring(0, eq), value.substring(eq + 1));
    }

    private static boolean[] kinds(String value) {
      boolean[] out = new boolean[16];
      for (String k : value.split(",")) {
        if (!k.isEmpty()) {
          out[Integer.parseInt(k.trim())] = true;
        }
      }
      return out;
    }

    static boolean has(boolean[] set, int kind) {
      return kind >= 0 && kind < set.length && set[kind];
    }
  }

  /** Spark's Parquet writer for one schema, prepared on the driver as a file write prepares it. */
  static final class Writers implements Serializable {
    final OutputWriterFactory factory;
    final SerializableConfiguration conf;
    final StructType schema;

    private Writers(OutputWriterFactory factory, SerializableConfiguration conf, StructType schema) {
      this.factory = factory;
      this.conf = conf;
      this.schema = schema;
    }

    @SuppressWarnings("unchecked")
    static Writers prepare(SparkSession spark, Map<String, String> options, StructType schema, Path target)
        throws IOException {
      scala.collection.immutable.Map<String, String> opts =
          (scala.collection.immutable.Map<String, String>) scala.collection.immutable.Map$.MODULE$.from(
              scala.jdk.javaapi.CollectionConverters.asScala(options));
      Job job = Job.getInstance(spark.sessionState().newHadoopConfWithOptions(opts));
      OutputWriterFactory factory = new ParquetFileFormat().prepareWrite(spark, job, opts, schema);
      FlatRowWriteSupport.use(job.getConfiguration());
      return new Writers(factory, new SerializableConfiguration(writing(job.getConfiguration(), target)), schema);
    }

    /** The writers' settings: {@code conf}, with local files written by {@link LocalFiles} when {@code target} is local. */
    static Configuration writing(Configuration conf, Path target) {
      Configuration out = new Configuration(conf);
      LocalFiles.useFor(target, out);
      return out;
    }

    OutputWriter open(String path, int partition, int attempt) {
      TaskAttemptID id = new TaskAttemptID(new TaskID(new JobID("icefloe", 0), TaskType.MAP, partition), attempt);
      Configuration settings = conf.value();
      settings.setClassLoader(ChangeWriter.class.getClassLoader());     // where LocalFiles is
      TaskAttemptContext context = new TaskAttemptContextImpl(settings, id);
      return factory.newInstance(path, schema, context);
    }
  }

  /** The writers and the Hadoop settings, broadcast. */
  static final class Shared implements Serializable {
    final Writers data;
    final Writers deletes;
    final SerializableConfiguration conf;

    Shared(Writers data, Writers deletes, SerializableConfiguration conf) {
      this.data = data;
      this.deletes = deletes;
      this.conf = conf;
    }
  }

  /** What each task runs over its rows. */
  static final class Task implements Function2<Integer, Iterator<InternalRow>, Iterator<byte[]>> {
    private final Settings s;
    private final Broadcast<Shared> shared;

    Task(Settings s, Broadcast<Shared> shared) {
      this.s = s;
      this.shared = shared;
    }

    @Override
    public Iterator<byte[]> call(Integer partition, Iterator<InternalRow> rows) throws Exception {
      TaskContext ctx = TaskContext.get();
      int attempt = ctx == null ? 0 : ctx.attemptNumber();
      Shared sh = shared.value();
      SerializableConfiguration conf = sh.conf;
      Run run = new Run(s, sh.data, sh.deletes, conf.value(), partition, attempt);
      byte[] answer;
      try {
        answer = run.consume(rows);
      } catch (Throwable t) {
        run.removeAll();
        throw t;
      }
      Path marker = new Path(s.marker);
      if (marker.getFileSystem(conf.value()).exists(marker)) {
        run.removeAll();
        return java.util.Collections.emptyIterator();
      }
      return answer.length == 0 ? java.util.Collections.emptyIterator()
          : java.util.Collections.singletonList(answer).iterator();
    }
  }

  /** One task's writing: its open files, what it wrote, and its answer. */
  static final class Run {
    private final Settings s;
    private final Writers data;
    private final Writers deletes;
    private final Configuration conf;
    private final int partition;
    private final int attempt;
    private final String prefix;
    private final List<Path> written = new ArrayList<>();
    private final ByteArrayOutputStream answer = new ByteArrayOutputStream();
    private final DataOutputStream frames = new DataOutputStream(answer);
    private final int fileCol;
    private final int posCol;
    private final int kindCol;

    // the data file whose positions arrive, and what its positions go to
    private String target;
    private UTF8String targetUtf;
    private final HashMap<Integer, Long> counts = new HashMap<>();
    private OutputWriter deleteWriter;
    private String deletePath;
    private final GenericInternalRow deleteRow = new GenericInternalRow(2);
    private long[] words;
    private int deleteFiles;

    // the data files being written: the partition key's column, and the files open by key (one,
    // keyed by the empty string, when not keyed), the least recently written first
    private final int keyCol;
    private final LinkedHashMap<UTF8String, Open> open = new LinkedHashMap<>(16, 0.75f, true);
    private int dataFiles;
    private UnsafeProjection project;

    // the task's Puffin file of vectors
    private FSDataOutputStream puffin;
    private Path puffinPath;
    private final List<String> blobs = new ArrayList<>();
    private final List<long[]> blobPlaces = new ArrayList<>();

    Run(Settings s, Writers data, Writers deletes, Configuration conf, int partition, int attempt) {
      this.s = s;
      this.data = data;
      this.deletes = deletes;
      this.conf = conf;
      this.partition = partition;
      this.attempt = attempt;
      this.prefix = String.format("%05d-%d-%s", partition, attempt, s.job);
      this.fileCol = s.dataColumns;
      this.posCol = s.dataColumns + 1;
      this.kindCol = s.dataColumns + 2;
      this.keyCol = s.dataColumns + 3;
    }

    byte[] consume(Iterator<InternalRow> rows) throws IOException {
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        int kind = row.getInt(kindCol);
        if (Settings.has(s.deleting, kind) && !row.isNullAt(fileCol)) {
          UTF8String file = row.getUTF8String(fileCol);
          if (targetUtf == null || !file.equals(targetUtf)) {
            finishTarget();
            targetUtf = file.clone();
            target = targetUtf.toString();
          }
          counts.merge(kind, 1L, Long::sum);
          long pos = row.getLong(posCol);
          if (s.vectors) {
            words = DeleteSources.set(words == null ? new long[16] : words, pos);
          } else {
            if (deleteWriter == null) {
              deletePath = String.format("%s/%s-%05d-pos-deletes.parquet", s.dataDir, prefix, deleteFiles++);
              opening(deletePath);
              deleteWriter = deletes.open(deletePath, partition, attempt);
            }
            deleteRow.update(0, targetUtf);
            deleteRow.setLong(1, pos);
            deleteWriter.write(deleteRow);
          }
        }
        if (Settings.has(s.writing, kind)) {
          UTF8String key = s.keyed ? row.getUTF8String(keyCol) : UTF8String.EMPTY_UTF8;
          Open o = open.get(key);
          if (o == null) {
            if (open.size() >= MAX_OPEN) {
              Iterator<Open> eldest = open.values().iterator();
              Open closing = eldest.next();
              eldest.remove();
              finishData(closing);
            }
            o = new Open(key.clone(), String.format("%s/%s-%05d.parquet", s.dataDir, prefix, ++dataFiles));
            opening(o.path);
            o.writer = data.open(o.path, partition, attempt);
            open.put(o.key, o);
          }
          if (project == null) {
            project = UnsafeProjection.create(data.schema);     // the first columns, as the writer takes them
          }
          o.writer.write(project.apply(row));
          if (++o.rows >= s.maxRecords) {
            open.remove(o.key);
            finishData(o);
          }
        }
      }
      finishTarget();
      for (Open o : open.values()) {
        finishData(o);
      }
      open.clear();
      finishPuffin();
      frames.flush();
      return answer.toByteArray();
    }

    /** The current data file's positions written out, and their counts answered. */
    private void finishTarget() throws IOException {
      if (target == null) {
        return;
      }
      if (s.vectors) {
        long[] marked = words == null ? new long[1] : words;
        for (DeleteSources.Source src : s.previous.getOrDefault(target, java.util.Collections.emptyList())) {
          marked = DeleteSources.mark(marked, src, conf);
        }
        addVector(target, marked);
        words = null;
      } else if (deleteWriter != null) {
        answerFile('P', deleteWriter, deletePath);
        deleteWriter = null;
        writeString(target);
      }
      for (Map.Entry<Integer, Long> e : counts.entrySet()) {
        frames.writeByte('C');
        writeString(target);
        frames.writeInt(e.getKey());
        frames.writeLong(e.getValue());
      }
      counts.clear();
      target = null;
      targetUtf = null;
    }

    private void finishData(Open o) throws IOException {
      OutputWriter w = o.writer;
      o.writer = null;
      answerFile(s.keyed ? 'K' : 'D', w, o.path);
      if (s.keyed) {
        writeString(o.key.toString());
      }
    }

    /** Appends the vector of {@code marked} (a bitmap of words) for data file {@code file} to the task's Puffin file. */
    private void addVector(String file, long[] marked) throws IOException {
      byte[] bitmap = portable(marked);
      long cardinality = 0;
      for (long w : marked) {
        cardinality += Long.bitCount(w);
      }
      if (puffin == null) {
        puffinPath = new Path(String.format("%s/%s-deletes.puffin", s.dataDir, prefix));
        opening(puffinPath.toString());
        puffin = puffinPath.getFileSystem(conf).create(puffinPath, false);
        puffin.write(PUFFIN_MAGIC);
      }
      long offset = puffin.getPos();
      CRC32 crc = new CRC32();
      crc.update(VECTOR_MAGIC);
      crc.update(bitmap);
      ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN);
      head.putInt(VECTOR_MAGIC.length + bitmap.length).put(VECTOR_MAGIC);
      puffin.write(head.array());
      puffin.write(bitmap);
      puffin.write(ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN).putInt((int) crc.getValue()).array());
      long length = puffin.getPos() - offset;
      blobs.add(file);
      blobPlaces.add(new long[] {offset, length, cardinality});
    }

    private void finishPuffin() throws IOException {
      if (puffin == null) {
        return;
      }
      StringBuilder json = new StringBuilder("{\"blobs\":[");
      for (int i = 0; i < blobs.size(); i++) {
        long[] place = blobPlaces.get(i);
        json.append(i == 0 ? "" : ",").append("{\"type\":\"deletion-vector-v1\",\"fields\":[").append(ROW_POSITION_ID)
            .append("],\"snapshot-id\":-1,\"sequence-number\":-1,\"offset\":").append(place[0])
            .append(",\"length\":").append(place[1]).append(",\"properties\":{\"referenced-data-file\":")
            .append(quoted(blobs.get(i))).append(",\"cardinality\":\"").append(place[2]).append("\"}}");
      }
      json.append("],\"properties\":{\"created-by\":\"icefloe\"}}");
      byte[] payload = json.toString().getBytes(StandardCharsets.UTF_8);
      puffin.write(PUFFIN_MAGIC);
      puffin.write(payload);
      puffin.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(payload.length).putInt(0).array());
      puffin.write(PUFFIN_MAGIC);
      long size = puffin.getPos();
      puffin.close();
      puffin = null;
      String path = puffinPath.toString();
      for (int i = 0; i < blobs.size(); i++) {
        long[] place = blobPlaces.get(i);
        frames.writeByte('V');
        writeString(path);
        frames.writeLong(size);
        writeString(blobs.get(i));
        frames.writeLong(place[0]);
        frames.writeLong(place[1]);
        frames.writeLong(place[2]);
      }
    }

    /** Closes {@code writer} and answers its file: {@code tag}, the path, the size and the footer (read back). */
    private void answerFile(char tag, OutputWriter writer, String path) throws IOException {
      writer.close();
      Path p = new Path(path);
      DescribedParquetFormat.Footer got = DescribedParquetFormat.readFooter(p.getFileSystem(conf), p);
      frames.writeByte(tag);
      writeString(path);
      frames.writeLong(got.size);
      frames.writeInt(got.bytes.length);
      frames.write(got.bytes);
    }

    /** Notes a file about to be written (it is removed if the task fails); a test's fault fails it here. */
    private void opening(String path) throws IOException {
      written.add(new Path(path));
      if (s.failAt != null && path.substring(path.lastIndexOf('/') + 1).contains(s.failAt)) {
        throw new IOException("injected fault in a task writing " + path);
      }
    }

    private void writeString(String v) throws IOException {
      byte[] b = v.getBytes(StandardCharsets.UTF_8);
      frames.writeInt(b.length);
      frames.write(b);
    }

    /** Removes every file the task wrote or began (a failed task, or a job that failed elsewhere). */
    void removeAll() {
      for (Closeable c : new Closeable[] {() -> { if (deleteWriter != null) deleteWriter.close(); },
          () -> { for (Open o : open.values()) { if (o.writer != null) o.writer.close(); } },
          () -> { if (puffin != null) puffin.close(); }}) {
        try {
          c.close();
        } catch (Throwable ignored) {
          // the file goes anyway
        }
      }
      for (Path p : written) {
        try {
          p.getFileSystem(conf).delete(p, false);
        } catch (Throwable ignored) {
          // the driver removes the job's files by name
        }
      }
    }
  }

  /** A data file being written: its partition key, path, writer and rows so far. */
  static final class Open {
    final UTF8String key;
    final String path;
    OutputWriter writer;
    long rows;

    Open(UTF8String key, String path) {
      this.key = key;
      this.path = path;
    }
  }

  private interface Closeable {
    void close() throws Exception;
  }

  /**
   * The positions set in {@code words} as a 64-bit Roaring bitmap in its portable form: the count of
   * 32-bit buckets, then each bucket's high 32 bits and its 32-bit Roaring bitmap (little-endian).
   */
  static byte[] portable(long[] words) {
    List<long[]> keys = new ArrayList<>();
    List<RoaringBitmap> maps = new ArrayList<>();
    long currentKey = -1;
    RoaringBitmapWriter<RoaringBitmap> writer = null;
    for (int w = 0; w < words.length; w++) {
      long word = words[w];
      while (word != 0) {
        long pos = ((long) w << 6) + Long.numberOfTrailingZeros(word);
        word &= word - 1;
        long key = pos >>> 32;
        if (key != currentKey) {
          if (writer != null) {
            maps.add(writer.get());
          }
          writer = RoaringBitmapWriter.writer().runCompress(true).get();
          keys.add(new long[] {key});
          currentKey = key;
        }
        writer.add((int) pos);
      }
    }
    if (writer != null) {
      maps.add(writer.get());
    }
    int size = 8;
    for (RoaringBitmap rb : maps) {
      rb.runOptimize();
      size += 4 + rb.serializedSizeInBytes();
    }
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(maps.size());
    for (int i = 0; i < maps.size(); i++) {
      out.putInt((int) keys.get(i)[0]);
      maps.get(i).serialize(out);
    }
    return out.array();
  }

  static String quoted(String v) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : v.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
