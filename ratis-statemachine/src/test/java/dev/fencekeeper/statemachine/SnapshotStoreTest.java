package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.StateImage;
import dev.fencekeeper.core.ValueRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.util.MD5FileUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Snapshot files: the MD5 taken while writing and checked while reading is the file's own. */
class SnapshotStoreTest {
  private static final Limits LIMITS = Limits.defaults();

  @TempDir Path dir;

  private static FencingState state() {
    List<StateImage.Resource> resources = new ArrayList<>();
    for (int r = 0; r < 5; r++) {
      TreeMap<String, ValueRecord> values = new TreeMap<>();
      for (int k = 0; k < 20; k++) {
        values.put(
            "key-" + k, new ValueRecord(("value " + r + "/" + k).getBytes(), 100 + r, k + 1, 900));
      }
      resources.add(StateImage.Resource.of("resource-" + r, 100 + r, null, values));
    }
    return FencingState.restore(LIMITS, new StateImage(3, 1_000, 500, 0, resources));
  }

  private static byte[] bytes(FencingState s) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SnapshotStore.writeTo(s.image(), out);
    return out.toByteArray();
  }

  // Guarantee: the MD5 written next to a snapshot is the MD5 of the file, and the file reads back
  // to the same state.
  @Test
  void writtenDigestIsTheFilesAndTheStateReadsBack() throws IOException {
    Path file = dir.resolve("snapshot.3_42");
    FencingState original = state();

    MD5Hash md5 = SnapshotStore.writeFile(original.image(), file);

    assertThat(md5).isEqualTo(MD5FileUtil.computeMd5ForFile(file.toFile()));
    assertThat(MD5FileUtil.readStoredMd5ForFile(file.toFile())).isEqualTo(md5);
    assertThat(Files.exists(dir.resolve("snapshot.3_42.writing"))).isFalse();
    assertThat(bytes(SnapshotStore.readFile(file, md5, LIMITS))).isEqualTo(bytes(original));
  }

  // Guarantee: a snapshot whose bytes changed after writing is refused as corrupt, whether the
  // change hits a value (the file still parses) or the framing (it does not).
  @Test
  void changedBytesAreReportedAsCorrupt() throws IOException {
    Path file = dir.resolve("snapshot.3_42");
    MD5Hash md5 = SnapshotStore.writeFile(state().image(), file);
    byte[] good = Files.readAllBytes(file);

    for (int at : new int[] {good.length / 2, 1}) {
      byte[] bad = good.clone();
      bad[at] ^= 0x5A;
      Files.write(file, bad);
      assertThatThrownBy(() -> SnapshotStore.readFile(file, md5, LIMITS))
          .as("byte %d changed", at)
          .isInstanceOf(IOException.class)
          .hasMessageContaining("is corrupt: MD5");
    }
  }
}
