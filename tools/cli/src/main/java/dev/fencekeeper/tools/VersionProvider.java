package dev.fencekeeper.tools;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** {@code --version}: this build's version and the Ratis it embeds, recorded at build time. */
final class VersionProvider implements CommandLine.IVersionProvider {
  private static final String RESOURCE = "/dev/fencekeeper/tools/version.properties";

  @Override
  public String[] getVersion() throws IOException {
    Properties build = new Properties();
    try (InputStream in = VersionProvider.class.getResourceAsStream(RESOURCE)) {
      if (in != null) {
        build.load(in);
      }
    }
    return new String[] {
      "fencekeeper " + build.getProperty("version", "(unknown version)"),
      "Apache Ratis "
          + build.getProperty("ratis.version", "(unknown)")
          + ", Java "
          + Runtime.version()
          + " ("
          + System.getProperty("java.vendor")
          + ")"
    };
  }
}
