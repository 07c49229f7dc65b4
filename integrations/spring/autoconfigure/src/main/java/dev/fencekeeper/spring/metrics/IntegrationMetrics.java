package dev.fencekeeper.spring.metrics;

import dev.fencekeeper.jdbc.JdbcFence;
import dev.fencekeeper.shedlock.FencekeeperLockProvider;
import dev.fencekeeper.shedlock.FencekeeperLockProvider.SkipReason;
import dev.fencekeeper.spring.integration.FencekeeperLockRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;

/**
 * Counters of what the integrations refused or skipped, read from them at each scrape:
 *
 * <ul>
 *   <li>{@code fencekeeper.jdbc.transactions.refused{table}} — fenced transactions (and advances at
 *       acquire) refused because a newer token was known: the database had accepted it, or, for a
 *       lock's raw token, the cluster had issued it;
 *   <li>{@code fencekeeper.lock.attempts.skipped{integration,reason}} — lock attempts that did not
 *       run their task for a reason other than the lock being held: {@code integration} is {@code
 *       shedlock} or {@code lock-registry}; {@code reason} is {@code unavailable} (no node
 *       answered) or {@code fence_failed} (the guard row could not be raised at acquire).
 * </ul>
 *
 * <p>Each method touches only the types of its own integration, so a binder never loads an
 * integration the application does not have.
 */
public final class IntegrationMetrics {
  static final String REFUSED = "fencekeeper.jdbc.transactions.refused";
  static final String SKIPPED = "fencekeeper.lock.attempts.skipped";

  private IntegrationMetrics() {}

  public static void bindRefusals(MeterRegistry registry, JdbcFence fence) {
    FunctionCounter.builder(REFUSED, fence, JdbcFence::refusals)
        .description(
            "fenced transactions the database refused: it had already accepted a newer token")
        .tag("table", fence.table())
        .register(registry);
  }

  public static void bindSkips(MeterRegistry registry, FencekeeperLockProvider provider) {
    for (SkipReason reason : SkipReason.values()) {
      FunctionCounter.builder(SKIPPED, provider, p -> p.skipped(reason))
          .description("lock attempts that skipped their task for a reason other than a holder")
          .tag("integration", "shedlock")
          .tag("reason", reason.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  public static void bindSkips(MeterRegistry registry, FencekeeperLockRegistry lockRegistry) {
    FunctionCounter.builder(SKIPPED, lockRegistry, FencekeeperLockRegistry::unavailableAttempts)
        .description("lock attempts that skipped their task for a reason other than a holder")
        .tag("integration", "lock-registry")
        .tag("reason", "unavailable")
        .register(registry);
    FunctionCounter.builder(SKIPPED, lockRegistry, FencekeeperLockRegistry::fenceFailures)
        .description("lock attempts that skipped their task for a reason other than a holder")
        .tag("integration", "lock-registry")
        .tag("reason", "fence_failed")
        .register(registry);
  }
}
