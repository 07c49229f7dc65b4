package dev.fencekeeper.tools.drill.check;

import dev.fencekeeper.tools.drill.history.Op;
import dev.fencekeeper.tools.drill.history.Op.OpType;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Decides whether the reads and writes of one key are linearizable against a register (Wing and
 * Gong's search, with Lowe's memoisation of visited (linearized set, register value)
 * configurations).
 *
 * <p>No maintained JVM library on Maven Central checks recorded histories (Knossos is Clojure on
 * Clojars, Porcupine is Go), so the search lives here; it is small because the model is a single
 * register.
 *
 * <p>Writes answered OK must take effect between their invoke and complete; writes without an
 * answer may take effect at any point after their invoke, or never; definitely rejected writes and
 * unanswered reads say nothing and are left out. A read that is enabled and agrees with the current
 * value is linearized at once without branching: reading changes nothing, and linearizing an
 * operation only enables more.
 */
public final class RegisterLinearizability {
  /**
   * Visited configurations after which the search gives up and reports "undecided" (never a pass).
   */
  static final long DEFAULT_BUDGET = 2_000_000;

  public enum Answer {
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNDECIDED
  }

  private final List<Op> ops;
  private final boolean[] required;
  private final long[] invoke;
  private final long[] complete;
  private final boolean[] write;
  private final String[] value;
  private final int requiredCount;
  private final long budget;
  private final Set<Config> seen = new HashSet<>();
  private long visited;

  private record Config(BitSet linearized, String value) {}

  private RegisterLinearizability(List<Op> relevant, long budget) {
    this.ops = relevant;
    this.budget = budget;
    int n = relevant.size();
    required = new boolean[n];
    invoke = new long[n];
    complete = new long[n];
    write = new boolean[n];
    value = new String[n];
    int count = 0;
    for (int i = 0; i < n; i++) {
      Op op = relevant.get(i);
      required[i] = op.ok();
      invoke[i] = op.invokeNanos();
      complete[i] = op.ok() ? op.completeNanos() : Long.MAX_VALUE;
      write[i] = op.type() == OpType.WRITE;
      value[i] = write[i] ? op.value() : op.result().readValue();
      if (required[i]) {
        count++;
      }
    }
    requiredCount = count;
  }

  /** The operations of one key that bear on linearizability, in invocation order. */
  public static List<Op> relevant(List<Op> keyOps) {
    List<Op> out = new ArrayList<>();
    for (Op op : keyOps) {
      boolean isWrite = op.type() == OpType.WRITE && op.possiblyApplied();
      boolean isRead = op.type() == OpType.READ && op.ok();
      if (isWrite || isRead) {
        out.add(op);
      }
    }
    out.sort(Comparator.comparingLong(Op::invokeNanos).thenComparingInt(Op::id));
    return out;
  }

  public static Answer check(List<Op> keyOps) {
    return check(keyOps, DEFAULT_BUDGET);
  }

  public static Answer check(List<Op> keyOps, long budget) {
    RegisterLinearizability search = new RegisterLinearizability(relevant(keyOps), budget);
    try {
      return search.search(new BitSet(search.ops.size()), null, 0)
          ? Answer.LINEARIZABLE
          : Answer.NOT_LINEARIZABLE;
    } catch (BudgetExhausted e) {
      return Answer.UNDECIDED;
    }
  }

  /**
   * A smallest-we-can-find sub-history that is still not linearizable, from one that is not. Only
   * reads, and then writes no remaining read observed, are dropped: removing either keeps a
   * linearizable history linearizable, so the witness proves the whole history wrong.
   */
  public static List<Op> witness(List<Op> keyOps, long budgetPerCheck) {
    List<Op> current = new ArrayList<>(relevant(keyOps));
    for (Op op : List.copyOf(current)) {
      if (op.type() == OpType.READ) {
        List<Op> without = new ArrayList<>(current);
        without.remove(op);
        if (check(without, budgetPerCheck) == Answer.NOT_LINEARIZABLE) {
          current = without;
        }
      }
    }
    for (Op op : List.copyOf(current)) {
      if (op.type() == OpType.WRITE
          && current.stream()
              .noneMatch(
                  r ->
                      r.type() == OpType.READ
                          && Objects.equals(r.result().readValue(), op.value()))) {
        List<Op> without = new ArrayList<>(current);
        without.remove(op);
        if (check(without, budgetPerCheck) == Answer.NOT_LINEARIZABLE) {
          current = without;
        }
      }
    }
    return current;
  }

  private static final class BudgetExhausted extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BudgetExhausted() {
      super(null, null, false, false);
    }
  }

  private boolean search(BitSet linearized, String register, int requiredDone) {
    if (++visited > budget) {
      throw new BudgetExhausted();
    }
    // Greedily take every enabled read that sees the current value.
    BitSet bits = linearized;
    int done = requiredDone;
    boolean progressed = true;
    while (progressed) {
      progressed = false;
      long horizon = horizon(bits);
      for (int i = bits.nextClearBit(0); i < ops.size(); i = bits.nextClearBit(i + 1)) {
        if (invoke[i] >= horizon) {
          break;
        }
        if (!write[i] && Objects.equals(value[i], register)) {
          if (bits == linearized) {
            bits = (BitSet) linearized.clone();
          }
          bits.set(i);
          done++;
          progressed = true;
        }
      }
    }
    if (done == requiredCount) {
      return true;
    }
    if (!seen.add(new Config(bits, register))) {
      return false;
    }
    long horizon = horizon(bits);
    for (int i = bits.nextClearBit(0); i < ops.size(); i = bits.nextClearBit(i + 1)) {
      if (invoke[i] >= horizon) {
        break;
      }
      if (write[i]) {
        BitSet next = (BitSet) bits.clone();
        next.set(i);
        if (search(next, value[i], done + (required[i] ? 1 : 0))) {
          return true;
        }
      }
    }
    return false;
  }

  /** Operations invoked before the earliest completion among pending required ones may go next. */
  private long horizon(BitSet linearized) {
    long min = Long.MAX_VALUE;
    for (int i = linearized.nextClearBit(0); i < ops.size(); i = linearized.nextClearBit(i + 1)) {
      if (required[i] && complete[i] < min) {
        min = complete[i];
      }
    }
    return min;
  }
}
