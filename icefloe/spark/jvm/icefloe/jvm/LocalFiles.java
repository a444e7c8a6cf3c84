package icefloe.jvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
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
 */
public class LocalFiles extends RawLocalFileSystem {
  /** {@code conf} set to write local files through this class (a new instance each time: not cached). */
  static void use(org.apache.hadoop.conf.Configuration conf) {
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
