package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ConfigException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which of the Java client's APIs a fencekeeper workload drives. {@link #LEASE} is what the README
 * shows and users call: {@code client.acquire(...)} returns a self-renewing {@code Lease}, writes
 * go through {@code lease.write(...)}, {@code lease.close()} releases. {@link #RAW} is the
 * token-level path underneath ({@code acquireToken}, {@code write(resource, token, ...)}, {@code
 * release}): nothing renews, no lease events are followed.
 */
enum ClientApi {
  LEASE("lease", "Lease API"),
  RAW("raw", "raw token");

  /** {@code --api} when not given: the API applications call. */
  static final String DEFAULT_NAMES = "lease";

  /** The name {@code --api} takes and the JSON's {@code api} field says. */
  final String label;

  /** How a row measured through this path is labelled in the tables. */
  final String title;

  ClientApi(String label, String title) {
    this.label = label;
    this.title = title;
  }

  /**
   * The paths named in {@code --api}, in the order given: the first is the one the ratios and
   * targets use. Unknown, repeated or no names are refused.
   */
  static List<ClientApi> parse(String names) {
    List<ClientApi> chosen = new ArrayList<>();
    for (String part : names.split(",", -1)) {
      String name = part.trim();
      ClientApi api = null;
      for (ClientApi a : values()) {
        if (a.label.equals(name)) {
          api = a;
        }
      }
      if (api == null || chosen.contains(api)) {
        throw new ConfigException(
            "--api: '"
                + name
                + "' is "
                + (api == null ? "not known" : "named twice")
                + "; choose lease, raw, lease,raw or raw,lease (comma-separated, the first is"
                + " the one ratios and targets use)");
      }
      chosen.add(api);
    }
    return List.copyOf(chosen);
  }
}
