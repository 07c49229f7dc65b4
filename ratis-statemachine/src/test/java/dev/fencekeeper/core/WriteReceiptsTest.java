package dev.fencekeeper.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

class WriteReceiptsTest {

  @Test
  void splitsOnlyACanonicalDecimalCounter() {
    assertThat(WriteReceipts.counterStart("3f2a-9c-17")).isEqualTo(8);
    assertThat(WriteReceipts.counterStart("17")).isZero();
    assertThat(WriteReceipts.counterStart("0")).isZero();
    // Kept whole: no digits, a leading zero, more digits than a long surely holds, non-ASCII
    // digits.
    assertThat(WriteReceipts.counterStart("abc")).isEqualTo(3);
    assertThat(WriteReceipts.counterStart("q01")).isEqualTo(3);
    assertThat(WriteReceipts.counterStart("q" + "9".repeat(19))).isEqualTo(20);
    assertThat(WriteReceipts.counterStart("q\u0663")).isEqualTo(2);
    assertThat(WriteReceipts.counterStart("")).isZero();
  }

  @Test
  void idsThatShareACounterOrDigitsStayApart() {
    WriteReceipts receipts = new WriteReceipts();
    List<String> ids =
        List.of(
            "a-1",
            "b-1",
            "a-01",
            "a-10",
            "1",
            "a-",
            "a",
            "a-" + "9".repeat(18),
            "a-" + "9".repeat(19));
    for (int i = 0; i < ids.size(); i++) {
      receipts.put(ids.get(i), "k" + i, i + 1, 100 + i, 64);
    }
    for (int i = 0; i < ids.size(); i++) {
      assertThat(receipts.find(ids.get(i)))
          .as(ids.get(i))
          .isEqualTo(new WriteReceipt(ids.get(i), "k" + i, i + 1, 100 + i));
    }
    assertThat(receipts.find("c-1")).isNull();
    assertThat(receipts.find("a-001")).isNull();
    assertThat(receipts.inOrder())
        .extracting(WriteReceipt::requestId)
        .containsExactlyElementsOf(ids);
  }

  @Test
  void aClientsReceiptsShareItsPrefixAndKeyStrings() {
    WriteReceipts receipts = new WriteReceipts();
    for (int i = 0; i < 100; i++) {
      // New strings each time, as decoding a command makes them.
      receipts.put(
          new String("5b9e1c0e-7d1f-4d7e-9a43-0c7cfc0b7a55-") + i, new String("invoice"), i, i, 64);
    }
    List<WriteReceipt> kept = receipts.inOrder();
    assertThat(kept).hasSize(64);
    assertThat(kept.get(0).requestId()).isEqualTo("5b9e1c0e-7d1f-4d7e-9a43-0c7cfc0b7a55-36");
    assertThat(kept).extracting(WriteReceipt::firstKey).allMatch(k -> k == kept.get(0).firstKey());
  }

  @Test
  void aLongRunKeepsExactlyTheNewestUpToTheLimit() {
    WriteReceipts receipts = new WriteReceipts();
    for (int i = 0; i < 5_000; i++) {
      receipts.put("client-" + i, "k", i, i, 1024);
    }
    assertThat(receipts.size()).isEqualTo(1024);
    for (int i = 0; i < 5_000; i++) {
      WriteReceipt found = receipts.find("client-" + i);
      if (i < 5_000 - 1024) {
        assertThat(found).as("client-%d", i).isNull();
      } else {
        assertThat(found).as("client-%d", i).isEqualTo(new WriteReceipt("client-" + i, "k", i, i));
      }
    }
  }

  @Test
  void clearForgetsEverything() {
    WriteReceipts receipts = new WriteReceipts();
    for (int i = 0; i < 20; i++) {
      receipts.put("c-" + i, "k", i, i, 1024);
    }
    receipts.clear();
    assertThat(receipts.size()).isZero();
    assertThat(receipts.find("c-3")).isNull();
    receipts.put("c-3", "k", 7, 7, 1024);
    assertThat(receipts.inOrder()).containsExactly(new WriteReceipt("c-3", "k", 7, 7));
  }

  sealed interface Op permits Put, Clear {}

  record Put(String requestId, String firstKey, long version, int max) implements Op {}

  record Clear() implements Op {}

  /**
   * Against the structure this class replaced: a LinkedHashMap in insertion order, trimmed from its
   * oldest entry after every put.
   */
  @Property(tries = 300)
  void behavesLikeAnInsertionOrderedMapTrimmedToTheLimit(@ForAll("ops") List<Op> ops) {
    WriteReceipts receipts = new WriteReceipts();
    LinkedHashMap<String, WriteReceipt> model = new LinkedHashMap<>();
    List<String> everyId = new ArrayList<>();
    for (Op op : ops) {
      if (op instanceof Put p) {
        everyId.add(p.requestId());
        receipts.put(p.requestId(), p.firstKey(), p.version(), p.version() * 10, p.max());
        model.put(
            p.requestId(),
            new WriteReceipt(p.requestId(), p.firstKey(), p.version(), p.version() * 10));
        Iterator<String> oldest = model.keySet().iterator();
        while (model.size() > p.max()) {
          oldest.next();
          oldest.remove();
        }
      } else {
        receipts.clear();
        model.clear();
      }
      assertThat(receipts.inOrder()).containsExactlyElementsOf(model.values());
      assertThat(receipts.size()).isEqualTo(model.size());
      for (String id : everyId) {
        assertThat(receipts.find(id)).as(id).isEqualTo(model.get(id));
      }
    }
  }

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<String> ids =
        Arbitraries.oneOf(
            Arbitraries.of(
                "p-0", "p-1", "p-10", "p-01", "q-1", "q-2", "1", "0", "p-", "p", "x", ""),
            Arbitraries.integers().between(0, 40).map(n -> "p-" + n));
    Arbitrary<String> keys = Arbitraries.of("k", "k2");
    // Mostly the configured limit, sometimes a lower or higher one (a restart with another config).
    Arbitrary<Integer> max =
        Arbitraries.frequencyOf(
            Tuple.of(8, Arbitraries.just(4)), Tuple.of(1, Arbitraries.integers().between(1, 12)));
    Arbitrary<Op> put =
        Combinators.combine(ids, keys, Arbitraries.longs().between(1, 50), max).as(Put::new);
    Arbitrary<Op> clear = Arbitraries.just(new Clear());
    return Arbitraries.frequencyOf(Tuple.of(12, put), Tuple.of(1, clear)).list().ofMaxSize(60);
  }
}
