package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.ListEntry;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code leases list} and {@code keys list}: operator listings, every page fetched and printed as
 * one.
 */
final class ListingCommands {
  /** The most a node returns per page. */
  static final int PAGE = 1000;

  private ListingCommands() {}

  /** Fetches one page: (after, pageLimit) → answer. */
  interface Pager {
    Result page(String after, int limit);
  }

  /** Every entry, page by page, up to {@code limit} (null: all). */
  record Listing(List<ListEntry> entries, boolean more, long nowMs, Response failure) {}

  static Listing fetch(Pager pager, Integer limit, boolean keys) {
    List<ListEntry> entries = new ArrayList<>();
    String after = "";
    long nowMs = 0;
    while (true) {
      int want = limit == null ? PAGE : Math.min(PAGE, limit - entries.size());
      if (want <= 0) {
        // --limit reached: say whether anything follows without printing it.
        Response probe = Wire.response(pager.page(after, 1));
        return new Listing(
            entries,
            probe.getCode() == ResultCode.FOUND && probe.getEntriesCount() > 0,
            nowMs,
            null);
      }
      Response page = Wire.response(pager.page(after, want));
      if (page.getCode() != ResultCode.FOUND) {
        return new Listing(entries, false, nowMs, page);
      }
      nowMs = Math.max(nowMs, page.getNowMs());
      entries.addAll(page.getEntriesList());
      if (!page.getMore() || page.getEntriesCount() == 0) {
        return new Listing(entries, false, nowMs, null);
      }
      ListEntry last = page.getEntries(page.getEntriesCount() - 1);
      after = keys ? last.getKey() : last.getResource();
    }
  }

  static String expiresIn(long expiresAtMs, long nowMs) {
    if (expiresAtMs == 0) {
      return "-";
    }
    long remainingMs = expiresAtMs - Math.max(nowMs, System.currentTimeMillis());
    return remainingMs <= 0
        ? "expired"
        : String.format(Locale.ROOT, "in %.1fs", remainingMs / 1000.0);
  }

  static String instant(long epochMs) {
    return epochMs == 0 ? "-" : Instant.ofEpochMilli(epochMs).toString();
  }

  /** Common shape of both listings. */
  abstract static class ListVerb implements Callable<Integer> {
    protected final CliContext context;

    @Mixin protected ClientOptions client;

    @Mixin private TimeoutOption deadline;

    @CommandLine.Spec protected CommandLine.Model.CommandSpec spec;

    @Option(names = "--prefix", paramLabel = "P", description = "Only names starting with P.")
    protected String prefix = "";

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "Print at most N entries. Default: all.")
    protected Integer limit;

    ListVerb(CliContext context) {
      this.context = context;
    }

    abstract Report list(FencingClient fencing);

    @Override
    public Integer call() {
      if (limit != null && limit < 1) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be at least 1");
      }
      try (FencingClient fencing = client.connect()) {
        return list(fencing).print(context, client.json());
      }
    }
  }

  @Command(
      name = "leases",
      mixinStandardHelpOptions = true,
      header = "List resources and their leases.",
      subcommands = {Leases.ListLeases.class})
  static final class Leases implements Runnable {
    @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      throw new CommandLine.ParameterException(spec.commandLine(), "choose: list");
    }

    @Command(
        name = "list",
        mixinStandardHelpOptions = true,
        header = "List resources and their live leases.",
        description = {
          "Every resource record (whose name starts with --prefix) in name order: its live lease's"
              + " token,",
          "owner and time left, the newest token issued, and how many wait. Linearizable. Exit 0,"
              + " 11."
        })
    static final class ListLeases extends ListVerb {
      ListLeases(CliContext context) {
        super(context);
      }

      @Override
      Report list(FencingClient fencing) {
        Listing l = fetch((after, n) -> fencing.listLeases(prefix, after, n), limit, false);
        if (l.failure() != null) {
          return Report.failure(l.failure().getCode(), l.failure().getMessage());
        }
        Table table = new Table("RESOURCE", "TOKEN", "OWNER", "EXPIRES", "NEWEST", "WAITERS");
        ObjectNode json = Json.object();
        if (!prefix.isEmpty()) {
          json.put("prefix", prefix);
        }
        ArrayNode array = json.putArray("leases");
        int live = 0;
        for (ListEntry e : l.entries()) {
          live += e.getLive() ? 1 : 0;
          table.row(
              e.getResource(),
              e.getLive() ? Long.toString(e.getToken()) : "-",
              e.getLive() ? e.getOwner() : "-",
              e.getLive() ? expiresIn(e.getExpiresAtMs(), l.nowMs()) : "-",
              Long.toString(e.getCurrentToken()),
              Integer.toString(e.getWaiters()));
          ObjectNode o =
              array.addObject().put("resource", e.getResource()).put("live", e.getLive());
          if (e.getLive()) {
            o.put("token", e.getToken())
                .put("owner", e.getOwner())
                .put("expiresAtMs", e.getExpiresAtMs());
          }
          o.put("currentToken", e.getCurrentToken()).put("waiters", e.getWaiters());
        }
        json.put("more", l.more());
        if (l.nowMs() != 0) {
          json.put("nowMs", l.nowMs());
        }
        List<String> lines = new ArrayList<>(table.isEmpty() ? List.of() : table.lines());
        lines.add(
            l.entries().size()
                + (l.entries().size() == 1 ? " resource, " : " resources, ")
                + live
                + (live == 1 ? " live lease" : " live leases")
                + (l.more() ? "; more follow (raise --limit)" : ""));
        return Report.ok(json, lines);
      }
    }
  }

  @Command(
      name = "keys",
      mixinStandardHelpOptions = true,
      header = "List the protected keys of a resource.",
      subcommands = {Keys.ListKeys.class})
  static final class Keys implements Runnable {
    @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      throw new CommandLine.ParameterException(spec.commandLine(), "choose: list");
    }

    @Command(
        name = "list",
        mixinStandardHelpOptions = true,
        header = "List a resource's keys.",
        description = {
          "Every key of <resource> (starting with --prefix) in name order: the token whose write"
              + " it",
          "accepted, its version, value size and when it was written (state-machine time, UTC).",
          "Linearizable. Exit 0 (also when there are none), 11."
        })
    static final class ListKeys extends ListVerb {
      @Parameters(index = "0", paramLabel = "<resource>")
      private String resource;

      ListKeys(CliContext context) {
        super(context);
      }

      @Override
      Report list(FencingClient fencing) {
        Listing l = fetch((after, n) -> fencing.listKeys(resource, prefix, after, n), limit, true);
        if (l.failure() != null) {
          return Report.failure(l.failure().getCode(), l.failure().getMessage());
        }
        Table table = new Table("KEY", "TOKEN", "VERSION", "BYTES", "WRITTEN");
        ObjectNode json = Json.object().put("resource", resource);
        if (!prefix.isEmpty()) {
          json.put("prefix", prefix);
        }
        ArrayNode array = json.putArray("keys");
        for (ListEntry e : l.entries()) {
          table.row(
              e.getKey(),
              Long.toString(e.getAcceptedToken()),
              Long.toString(e.getVersion()),
              Long.toString(e.getValueBytes()),
              instant(e.getWrittenAtMs()));
          array
              .addObject()
              .put("key", e.getKey())
              .put("acceptedToken", e.getAcceptedToken())
              .put("version", e.getVersion())
              .put("valueBytes", e.getValueBytes())
              .put("writtenAtMs", e.getWrittenAtMs());
        }
        json.put("more", l.more());
        List<String> lines = new ArrayList<>(table.isEmpty() ? List.of() : table.lines());
        lines.add(
            l.entries().size()
                + (l.entries().size() == 1 ? " key" : " keys")
                + " in "
                + resource
                + (l.more() ? "; more follow (raise --limit)" : ""));
        return Report.ok(json, lines);
      }
    }
  }
}
