package dev.fencekeeper.spring.boot;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.config.PropertyNames;
import java.util.Properties;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * One {@link FencingClient} for the whole application, from {@code fencekeeper.*}, once {@code
 * fencekeeper.endpoints} (or the deprecated {@code fencekeeper.peers}) is set. An application that
 * defines its own {@code FencingClient} bean keeps it, and every other part of this
 * auto-configuration uses that one.
 */
@AutoConfiguration
@Conditional(FencekeeperAutoConfiguration.ClusterNamed.class)
@EnableConfigurationProperties(FencekeeperProperties.class)
public class FencekeeperAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public ClusterConfig fencekeeperClusterConfig(FencekeeperProperties properties) {
    return ClusterConfig.fromProperties(clusterProperties(properties));
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public FencingClient fencingClient(ClusterConfig config, FencekeeperProperties properties) {
    String owner = properties.getOwner();
    return owner == null || owner.isBlank()
        ? FencingClient.connect(config)
        : FencingClient.connect(config, owner);
  }

  /**
   * The cluster properties the nodes read from their own file, as {@code fencekeeper.*} sets them.
   */
  static Properties clusterProperties(FencekeeperProperties properties) {
    Properties p = new Properties();
    properties.getCluster().forEach(p::setProperty);
    String endpoints = properties.getEndpoints();
    if (endpoints != null && !endpoints.isBlank()) {
      p.setProperty(PropertyNames.ENDPOINTS, endpoints);
    } else {
      p.setProperty(PropertyNames.PEERS, deprecatedPeers(properties));
    }
    if (properties.getClusterName() != null) {
      p.setProperty(PropertyNames.CLUSTER_NAME, properties.getClusterName());
    }
    if (properties.getRequestTimeout() != null) {
      p.setProperty(
          PropertyNames.CLIENT_REQUEST_TIMEOUT, Durations.format(properties.getRequestTimeout()));
    }
    FencekeeperProperties.Tls tls = properties.getTls();
    if (tls.getCert() != null) {
      p.setProperty(PropertyNames.TLS_CERT, tls.getCert().toString());
    }
    if (tls.getKey() != null) {
      p.setProperty(PropertyNames.TLS_KEY, tls.getKey().toString());
    }
    if (tls.getTrust() != null) {
      p.setProperty(PropertyNames.TLS_TRUST, tls.getTrust().toString());
    }
    return p;
  }

  @SuppressWarnings("deprecation") // read for this release, with a warning
  private static String deprecatedPeers(FencekeeperProperties properties) {
    LoggerFactory.getLogger(FencekeeperAutoConfiguration.class)
        .warn(
            "fencekeeper.peers (Raft addresses) is deprecated; name the nodes' client ports with"
                + " fencekeeper.endpoints=HOST:PORT,... (by default each Raft port + {})",
            ClusterConfig.CLIENT_PORT_OFFSET);
    return properties.getPeers();
  }

  /** Either property names the cluster. */
  static final class ClusterNamed extends AnyNestedCondition {
    ClusterNamed() {
      super(ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnProperty(prefix = "fencekeeper", name = "endpoints")
    static final class Endpoints {}

    @ConditionalOnProperty(prefix = "fencekeeper", name = "peers")
    static final class Peers {}
  }
}
