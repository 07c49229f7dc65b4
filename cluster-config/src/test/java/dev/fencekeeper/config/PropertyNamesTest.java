package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

class PropertyNamesTest {

  // Guarantee: each public name is the name of the key Keys defines under the same constant name,
  // so
  // code that writes properties by these names sets the keys the configuration reads.
  @Test
  void everyNameIsTheNameOfItsKey() throws Exception {
    int names = 0;
    for (Field field : PropertyNames.class.getDeclaredFields()) {
      if (!Modifier.isPublic(field.getModifiers())) {
        continue;
      }
      names++;
      ConfigKey<?> key = (ConfigKey<?>) Keys.class.getDeclaredField(field.getName()).get(null);
      assertThat(field.get(null)).as(field.getName()).isEqualTo(key.name());
      assertThat(Keys.NAMES).contains((String) field.get(null));
    }
    assertThat(names).isEqualTo(15);
  }

  @Test
  void aClientSettingWrittenByItsNameIsRead() {
    java.util.Properties p = ClusterConfig.forPeers("127.0.0.1:7301").toProperties();
    p.setProperty(PropertyNames.CLIENT_REQUEST_TIMEOUT, "7s");
    p.setProperty(PropertyNames.CLUSTER_NAME, "billing");

    ClusterConfig config = ClusterConfig.fromProperties(p);

    assertThat(config.clusterName()).isEqualTo("billing");
    assertThat(config.requestTimeout()).hasSeconds(7);
  }
}
