package dev.fencekeeper.server;

import dev.fencekeeper.config.Security;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.ratis.grpc.GrpcTlsConfig;

/**
 * A node's TLS material ({@code tls.cert}, {@code tls.key}, {@code tls.trust}) behind a key manager
 * and a trust manager that read it afresh at every handshake, so that {@link #reload} (SIGHUP) puts
 * new certificates in force for every new connection, incoming and outgoing, without a restart.
 * Connections already open keep the certificates they were made with. A reload that fails changes
 * nothing.
 */
public final class ReloadableTls {
  private static final Pattern PRIVATE_KEY =
      Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
  private static final List<String> KEY_ALGORITHMS = List.of("EC", "RSA", "Ed25519", "Ed448");

  /** The files' contents as managers, with the certificate they present. */
  private record Material(
      X509ExtendedKeyManager keys, X509ExtendedTrustManager trust, X509Certificate certificate) {}

  private final Security.TlsFiles files;
  private volatile Material current;

  private ReloadableTls(Security.TlsFiles files, Material material) {
    this.files = files;
    this.current = material;
  }

  /**
   * Reads {@code files}.
   *
   * @throws IOException naming the file that cannot be read or is not what it should be
   */
  public static ReloadableTls load(Security.TlsFiles files) throws IOException {
    return new ReloadableTls(files, read(files));
  }

  /**
   * Reads the files again and, if they make a usable certificate, key and trust, serves them from
   * the next handshake on; otherwise keeps what it served.
   *
   * @return the certificate now presented
   * @throws IOException if the files cannot be read or do not fit together; nothing changed
   */
  public X509Certificate reload() throws IOException {
    Material fresh = read(files);
    current = fresh;
    return fresh.certificate();
  }

  /** The certificate this node presents now. */
  public X509Certificate certificate() {
    return current.certificate();
  }

  /** When the certificate this node presents now stops being valid. */
  public Instant notAfter() {
    return current.certificate().getNotAfter().toInstant();
  }

  /** Mutual TLS for Ratis (server, peer clients, admin), through these managers. */
  public GrpcTlsConfig grpcTlsConfig() {
    return new GrpcTlsConfig(new KeyManagerView(), new TrustManagerView(), true);
  }

  private static Material read(Security.TlsFiles files) throws IOException {
    List<X509Certificate> chain = certificates(files.cert());
    if (chain.isEmpty()) {
      throw new IOException("tls.cert: " + files.cert() + " holds no certificate");
    }
    PrivateKey key = privateKey(files.key());
    if (!belongTogether(key, chain.get(0))) {
      throw new IOException(
          "tls.key "
              + files.key()
              + " is not the key of the certificate in tls.cert "
              + files.cert());
    }
    List<X509Certificate> trusted = certificates(files.trust());
    if (trusted.isEmpty()) {
      throw new IOException("tls.trust: " + files.trust() + " holds no certificate");
    }
    try {
      KeyStore keyStore = KeyStore.getInstance("PKCS12");
      keyStore.load(null, null);
      // The store never leaves this process; its password only satisfies the API.
      char[] password = "in-memory".toCharArray();
      keyStore.setKeyEntry("node", key, password, chain.toArray(Certificate[]::new));
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keyStore, password);
      KeyStore trustStore = KeyStore.getInstance("PKCS12");
      trustStore.load(null, null);
      for (int i = 0; i < trusted.size(); i++) {
        trustStore.setCertificateEntry("ca-" + i, trusted.get(i));
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trustStore);
      return new Material(
          only(kmf.getKeyManagers(), X509ExtendedKeyManager.class),
          only(tmf.getTrustManagers(), X509ExtendedTrustManager.class),
          chain.get(0));
    } catch (GeneralSecurityException e) {
      throw new IOException(
          "tls.cert " + files.cert() + " and tls.key " + files.key() + " do not fit together: " + e,
          e);
    }
  }

  /** Whether {@code key} signs what {@code certificate}'s public key verifies. */
  private static boolean belongTogether(PrivateKey key, X509Certificate certificate)
      throws IOException {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "EC" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          default -> key.getAlgorithm(); // Ed25519, Ed448
        };
    try {
      byte[] challenge = "fencekeeper".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(challenge);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(challenge);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static <T> T only(Object[] managers, Class<T> type) throws GeneralSecurityException {
    for (Object m : managers) {
      if (type.isInstance(m)) {
        return type.cast(m);
      }
    }
    throw new GeneralSecurityException("the JDK offers no " + type.getSimpleName());
  }

  private static List<X509Certificate> certificates(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      Collection<? extends Certificate> all =
          CertificateFactory.getInstance("X.509").generateCertificates(in);
      return all.stream().map(X509Certificate.class::cast).toList();
    } catch (CertificateException e) {
      throw new IOException(file + " is not a PEM certificate file: " + e.getMessage(), e);
    }
  }

  /** A PKCS#8 PEM key ({@code BEGIN PRIVATE KEY}), the one format Ratis's TLS reads. */
  private static PrivateKey privateKey(Path file) throws IOException {
    Matcher pem = PRIVATE_KEY.matcher(Files.readString(file, StandardCharsets.US_ASCII));
    if (!pem.find()) {
      throw new IOException("tls.key: " + file + " holds no PKCS#8 PEM key (BEGIN PRIVATE KEY)");
    }
    byte[] der = Base64.getMimeDecoder().decode(pem.group(1));
    for (String algorithm : KEY_ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException tryNext) {
        // not this algorithm's key
      }
    }
    throw new IOException("tls.key: " + file + " is not an EC, RSA or EdDSA PKCS#8 key");
  }

  /** Asks the current material at every handshake. */
  private final class KeyManagerView extends X509ExtendedKeyManager {
    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return current.keys().getClientAliases(keyType, issuers);
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return current.keys().chooseClientAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
      return current.keys().chooseEngineClientAlias(keyType, issuers, engine);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return current.keys().getServerAliases(keyType, issuers);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return current.keys().chooseServerAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      return current.keys().chooseEngineServerAlias(keyType, issuers, engine);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return current.keys().getCertificateChain(alias);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return current.keys().getPrivateKey(alias);
    }
  }

  /** Asks the current material at every handshake; hostname checks are the JDK's, as before. */
  private final class TrustManagerView extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      current.trust().checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      current.trust().checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      current.trust().checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      current.trust().checkServerTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      current.trust().checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      current.trust().checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return current.trust().getAcceptedIssuers();
    }
  }
}
