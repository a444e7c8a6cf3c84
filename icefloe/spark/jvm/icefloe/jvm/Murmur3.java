package icefloe.jvm;

/**
 * MurmurHash3, x86 32-bit: the hash both formats' bucket functions use (Iceberg's with seed 0 over a
 * value's hash bytes, Paimon's with seed 42 over a BinaryRow, whose length is a multiple of 4).
 */
final class Murmur3 {
  private Murmur3() {
  }

  private static int mixK(int k) {
    k *= 0xcc9e2d51;
    k = Integer.rotateLeft(k, 15);
    return k * 0x1b873593;
  }

  private static int mixH(int h, int k) {
    h ^= mixK(k);
    h = Integer.rotateLeft(h, 13);
    return h * 5 + 0xe6546b64;
  }

  private static int finish(int h, int length) {
    h ^= length;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }

  /** The hash of the 8 little-endian bytes of {@code v}. */
  static int hashLong(long v, int seed) {
    int h = mixH(seed, (int) v);
    h = mixH(h, (int) (v >>> 32));
    return finish(h, 8);
  }

  /** The hash of {@code data}: its 4-byte little-endian words, then the tail bytes. */
  static int hash(byte[] data, int seed) {
    int n = data.length;
    int h = seed;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      h = mixH(h, (data[i] & 0xff) | (data[i + 1] & 0xff) << 8 | (data[i + 2] & 0xff) << 16
          | (data[i + 3] & 0xff) << 24);
    }
    int tail = 0;
    switch (n - i) {
      case 3:
        tail ^= (data[i + 2] & 0xff) << 16;
        // fall through
      case 2:
        tail ^= (data[i + 1] & 0xff) << 8;
        // fall through
      case 1:
        tail ^= data[i] & 0xff;
        h ^= mixK(tail);
        break;
      default:
        break;
    }
    return finish(h, n);
  }
}
