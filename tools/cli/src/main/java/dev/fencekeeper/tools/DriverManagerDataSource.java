package dev.fencekeeper.tools;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source for a JDBC URL the user named (drill, bench): a new connection per call, through
 * the driver on the path.
 */
public final class DriverManagerDataSource implements DataSource {
  private final String url;
  private final Properties credentials = new Properties();

  /**
   * {@code user} and {@code password} may be null (the URL or the driver's defaults then decide).
   */
  public DriverManagerDataSource(String url, String user, String password) {
    this.url = url;
    if (user != null) {
      credentials.setProperty("user", user);
    }
    if (password != null) {
      credentials.setProperty("password", password);
    }
  }

  @Override
  public Connection getConnection() throws SQLException {
    return DriverManager.getConnection(url, credentials);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return DriverManager.getConnection(url, username, password);
  }

  @Override
  public PrintWriter getLogWriter() {
    return DriverManager.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) {
    DriverManager.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) {
    DriverManager.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() {
    return DriverManager.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no parent logger");
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return false;
  }
}
