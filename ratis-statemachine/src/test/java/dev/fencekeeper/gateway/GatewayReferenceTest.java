package dev.fencekeeper.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/http-gateway.md names every route the gateway serves, with a curl line that calls it (the
 * lines themselves are run against a real cluster by the Node client's cluster tests), and names no
 * route the gateway does not serve.
 */
class GatewayReferenceTest {
  static final Path PAGE = Path.of("..", "docs", "http-gateway.md");

  @Test
  void everyRouteHasACurlLineAndTheTableListsExactlyTheRoutes() throws IOException {
    String page = Files.readString(PAGE);
    for (Route route : Route.ALL.values()) {
      assertThat(page)
          .as(route.path())
          // $GW, or a shell default that falls back to it (${LEADER_GW:-$GW}).
          .containsPattern("curl [^\\n]*\\$GW}?" + Pattern.quote(route.path()) + "\\b");
      assertThat(page).as(route.path()).contains("`POST " + route.path());
    }
    Matcher table = Pattern.compile("^\\| `POST (/v1/[a-z/-]+)`", Pattern.MULTILINE).matcher(page);
    java.util.List<String> listed = new java.util.ArrayList<>();
    while (table.find()) {
      listed.add(table.group(1));
    }
    assertThat(listed).containsExactlyElementsOf(Route.ALL.keySet());
  }
}
