package dev.fencekeeper.tools;

import dev.fencekeeper.config.ConfigException;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;

/**
 * {@code USER[:GROUP]}: the account that files a command writes are for (the service user a node
 * runs as), looked up before anything is written.
 */
record FileOwner(String spec, UserPrincipal user, GroupPrincipal group) {

  /**
   * Looks up {@code spec}'s user (and group) on this host.
   *
   * @throws ConfigException naming {@code flag} if either does not exist
   */
  static FileOwner parse(String flag, String spec) {
    String[] parts = spec.split(":", -1);
    if (parts.length > 2 || parts[0].isBlank() || (parts.length == 2 && parts[1].isBlank())) {
      throw new ConfigException(flag + ": '" + spec + "' is not USER or USER:GROUP");
    }
    UserPrincipalLookupService lookup = FileSystems.getDefault().getUserPrincipalLookupService();
    try {
      UserPrincipal user = lookup.lookupPrincipalByName(parts[0]);
      GroupPrincipal group = parts.length == 2 ? lookup.lookupPrincipalByGroupName(parts[1]) : null;
      return new FileOwner(spec, user, group);
    } catch (UserPrincipalNotFoundException e) {
      throw new ConfigException(flag + ": no user or group '" + e.getName() + "' on this host");
    } catch (IOException e) {
      throw new ConfigException(flag + ": cannot look up '" + spec + "': " + e.getMessage());
    }
  }

  /** Gives {@code file} to this owner (and group); its mode stays as it is. */
  void apply(Path file) {
    try {
      PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
      if (view == null) {
        Files.setOwner(file, user);
        return;
      }
      view.setOwner(user);
      if (group != null) {
        view.setGroup(group);
      }
    } catch (IOException e) {
      throw new ConfigException(
          "cannot give "
              + file
              + " to "
              + spec
              + ": "
              + e.getMessage()
              + " (changing a file's owner takes root: run this as root, or chown it yourself)");
    }
  }
}
