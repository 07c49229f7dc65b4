package dev.fencekeeper.clientport;

/**
 * The node's bound on reads it holds between receiving and answering them ({@code
 * overload.pending-reads.max}), shared by every way a read arrives.
 */
public interface ReadSlots {
  /** A slot for one read; false when every slot is taken (the read is answered OVERLOADED). */
  boolean tryTake();

  /** Gives back a slot {@link #tryTake} gave. */
  void release();

  /** No bound at all: for tests. */
  ReadSlots UNBOUNDED =
      new ReadSlots() {
        @Override
        public boolean tryTake() {
          return true;
        }

        @Override
        public void release() {}
      };
}
