package dev.fencekeeper.client.fakenode;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A self-signed certificate and its key, made in memory for one test: whatever trusts only its own
 * certificate refuses every other identity's.
 */
public final class TestIdentity {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] NO_PASSWORD = new char[0];

  private final KeyPair keys;
  private final X509Certificate certificate;

  private TestIdentity(KeyPair keys, X509Certificate certificate) {
    this.keys = keys;
    this.certificate = certificate;
  }

  /** A new identity named {@code cn}, valid for 127.0.0.1 and localhost. */
  public static TestIdentity create(String cn) {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      KeyPair keys = g.generateKeyPair();
      X500Name name = new X500Name("CN=" + cn);
      Instant now = Instant.now();
      var builder =
          new JcaX509v3CertificateBuilder(
                  name,
                  new BigInteger(127, RANDOM).add(BigInteger.ONE),
                  Date.from(now.minusSeconds(60)),
                  Date.from(now.plus(Duration.ofDays(1))),
                  name,
                  keys.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
              .addExtension(
                  Extension.subjectAlternativeName,
                  false,
                  new GeneralNames(
                      new GeneralName[] {
                        new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                        new GeneralName(GeneralName.dNSName, "localhost")
                      }));
      X509Certificate certificate =
          new JcaX509CertificateConverter()
              .getCertificate(
                  builder.build(
                      new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
      return new TestIdentity(keys, certificate);
    } catch (GeneralSecurityException | java.io.IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot create a test certificate: " + e, e);
    }
  }

  /** What a TLS node presenting this identity serves with (no client certificate asked for). */
  public SslContext serverContext() {
    try {
      return GrpcSslContexts.configure(SslContextBuilder.forServer(keys.getPrivate(), certificate))
          .build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot build a TLS context: " + e, e);
    }
  }

  /** A key manager presenting this identity. */
  public KeyManager keyManager() {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("key", keys.getPrivate(), NO_PASSWORD, new Certificate[] {certificate});
      KeyManagerFactory f = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      f.init(store, NO_PASSWORD);
      return f.getKeyManagers()[0];
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalStateException("cannot build a key manager: " + e, e);
    }
  }

  /** A trust manager that trusts this identity's certificate alone. */
  public TrustManager trustManager() {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setCertificateEntry("ca", certificate);
      TrustManagerFactory f =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      f.init(store);
      return f.getTrustManagers()[0];
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalStateException("cannot build a trust manager: " + e, e);
    }
  }
}
