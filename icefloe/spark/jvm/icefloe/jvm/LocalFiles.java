package icefloe.jvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system, setting a file's mode through Java's own file API. Without
 * Hadoop's native library (pip's Spark has none) the raw local file system starts a {@code chmod}
 * process for every file it creates, about 4 ms each, and its checksummed wrapper does so twice
 * (the file and its {@code .crc}); icefloe's writers of many small files use this one instead, and
 * write no checksum files (Spark reads a file without one as it is).
 *
 * <p>Only writes whose files are local take it ({@link #useFor}). A write to another file system
 * (S3A, HDFS) leaves {@code fs.file.impl} alone: such a connector keeps the settings it was first
 * created with, in a cache shared by the executor's tasks, and asks them for its own local files
 * (S3A's upload buffers), where a class of an added jar may not be loadable.
 */
public class LocalFiles extends RawLocalFileSystem {
  /** {@code conf} set to write through this class when {@code target} is a local path; else unchanged. */
  public static void useFor(Path target, Configuration conf) {
    if (isLocal(target, conf)) {
      use(conf);
    }
  }

  /** Whether {@code p} (or, without a scheme, the default file system) is on the local file system. */
  public static boolean isLocal(Path p, Configuration conf) {
    String scheme = p == null ? null : p.toUri().getScheme();
    if (scheme == null) {
      scheme = FileSystem.getDefaultUri(conf).getScheme();
    }
    return scheme == null || "file".equalsIgnoreCase(scheme);
  }

  /** {@code conf} set to write local files through this class (a new instance each time: not cached). */
  static void use(Configuration conf) {
    conf.set("fs.file.impl", LocalFiles.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    conf.setClassLoader(LocalFiles.class.getClassLoader());
  }

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    Set<PosixFilePermission> mode = EnumSet.noneOf(PosixFilePermission.class);
    add(mode, permission.getUserAction(), PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
        PosixFilePermission.OWNER_EXECUTE);
    add(mode, permission.getGroupAction(), PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.GROUP_EXECUTE);
    add(mode, permission.getOtherAction(), PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
        PosixFilePermission.OTHERS_EXECUTE);
    try {
      Files.setPosixFilePermissions(pathToFile(p).toPath(), mode);
    } catch (UnsupportedOperationException e) {
      super.setPermission(p, permission);       // not a POSIX file system: Hadoop's own way
    }
  }

  private static void add(Set<PosixFilePermission> mode, FsAction action, PosixFilePermission read,
      PosixFilePermission write, PosixFilePermission execute) {
    if (action.implies(FsAction.READ)) {
      mode.add(read);
    }
    if (action.implies(FsAction.WRITE)) {
      mode.add(write);
    }
    if (action.implies(FsAction.EXECUTE)) {
      mode.add(execute);
    }
  }
}
