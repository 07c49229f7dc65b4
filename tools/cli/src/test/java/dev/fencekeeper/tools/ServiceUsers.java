package dev.fencekeeper.tools;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Acting as another local user, to check what a file's permissions let that user do: {@code nobody}
 * stands for a service user, {@code daemon} for any other local account. Needs root and {@code
 * runuser} (CI runs as root).
 */
final class ServiceUsers {
  private ServiceUsers() {}

  /** Whether this process can act as other users here. */
  static boolean canSwitchUser() {
    return "root".equals(System.getProperty("user.name"))
        && new File("/usr/sbin/runuser").canExecute();
  }

  /** Whether {@code user} can read {@code file}: {@code runuser -u user -- cat file} succeeds. */
  static boolean canRead(String user, Path file) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("/usr/sbin/runuser", "-u", user, "--", "cat", file.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("runuser did not finish");
    }
    return p.exitValue() == 0;
  }
}
