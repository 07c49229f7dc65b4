package dev.fencekeeper.tools.drill.check;

import dev.fencekeeper.tools.drill.history.History;
import dev.fencekeeper.tools.drill.history.LeaseEventRecord;
import dev.fencekeeper.tools.drill.history.Op;
import dev.fencekeeper.tools.drill.history.Op.OpType;
import dev.fencekeeper.tools.drill.history.Op.Outcome;
import dev.fencekeeper.tools.drill.history.Op.Result;
import java.util.ArrayList;
import java.util.List;

/** Hand-made histories: times are small integers on the history's clock, given by each test. */
final class Histories {
  private final List<Op> ops = new ArrayList<>();
  private final List<LeaseEventRecord> events = new ArrayList<>();
  private final List<Integer> finalReads = new ArrayList<>();
  private boolean eventsComplete = true;
  private long index = 1;

  Op acquire(String process, String resource, long invoke, long complete, long token, long smTime) {
    return add(
        new Op(
            ops.size() + 1,
            process,
            OpType.ACQUIRE,
            resource,
            null,
            0,
            null,
            invoke,
            complete,
            Outcome.OK,
            "GRANTED",
            new Result(token, 0, 0, null, smTime, smTime + 1000)));
  }

  Op renew(String process, String resource, long token, long invoke, long complete, long smTime) {
    return add(
        new Op(
            ops.size() + 1,
            process,
            OpType.RENEW,
            resource,
            null,
            token,
            null,
            invoke,
            complete,
            Outcome.OK,
            "RENEWED",
            new Result(token, 0, 0, null, smTime, smTime + 1000)));
  }

  Op write(
      String process,
      String resource,
      String key,
      long token,
      String value,
      long invoke,
      long complete,
      long version,
      long smTime) {
    return add(
        new Op(
            ops.size() + 1,
            process,
            OpType.WRITE,
            resource,
            key,
            token,
            value,
            invoke,
            complete,
            Outcome.OK,
            "ACCEPTED",
            new Result(token, version, token, null, smTime, 0)));
  }

  Op unknownWrite(
      String process, String resource, String key, long token, String value, long invoke) {
    return add(
        new Op(
            ops.size() + 1,
            process,
            OpType.WRITE,
            resource,
            key,
            token,
            value,
            invoke,
            Long.MAX_VALUE,
            Outcome.UNKNOWN,
            "UNAVAILABLE",
            Result.NONE));
  }

  Op rejectedWrite(
      String process,
      String resource,
      String key,
      long token,
      String value,
      long invoke,
      long complete) {
    return add(
        new Op(
            ops.size() + 1,
            process,
            OpType.WRITE,
            resource,
            key,
            token,
            value,
            invoke,
            complete,
            Outcome.FAIL,
            "STALE_TOKEN",
            Result.NONE));
  }

  Op read(
      String process,
      String resource,
      String key,
      long invoke,
      long complete,
      String value,
      long version,
      long acceptedToken) {
    return add(
        new Op(
            ops.size() + 1,
            process,
            OpType.READ,
            resource,
            key,
            0,
            null,
            invoke,
            complete,
            Outcome.OK,
            value == null ? "NOT_FOUND" : "FOUND",
            new Result(0, version, acceptedToken, value, 0, 0)));
  }

  Op finalRead(
      String resource,
      String key,
      long invoke,
      long complete,
      String value,
      long version,
      long acceptedToken) {
    Op read = read("final", resource, key, invoke, complete, value, version, acceptedToken);
    finalReads.add(read.id());
    return read;
  }

  LeaseEventRecord event(
      LeaseEventRecord.Type type, String resource, long token, long atMs, long observed) {
    LeaseEventRecord e =
        new LeaseEventRecord(
            index++, 0, type, resource, token, "owner", atMs + 1000, atMs, observed);
    events.add(e);
    return e;
  }

  Histories eventsIncomplete() {
    eventsComplete = false;
    return this;
  }

  private Op add(Op op) {
    ops.add(op);
    return op;
  }

  History build() {
    return new History(ops, events, eventsComplete, finalReads);
  }
}
