package dev.fencekeeper.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A small certificate authority for a local cluster, built with Bouncy Castle: a CA certificate and
 * certificates it signs, written as PEM files in the layout {@code fencekeeper certs} documents
 * ({@code ca.crt}, {@code <name>.crt}, {@code <name>.key} with the key in PKCS#8, which Ratis's TLS
 * needs). Keys are EC P-256; every leaf certificate names 127.0.0.1 and localhost (the node
 * certificate also the host names and addresses it is given) and may serve and connect.
 */
public final class Certificates {
  /**
   * The CNs of the certificates {@link #writeLocalSet} creates; node.crt's is what {@code
   * authz.nodes} expects.
   */
  public static final String NODE = "node";

  public static final String CLIENT = "client";
  public static final String ADMIN = "admin";
  public static final String NODE_CN = "fencekeeper-node";
  public static final String CLIENT_CN = "fencekeeper-client";
  public static final String ADMIN_CN = "fencekeeper-admin";
  public static final Duration DEFAULT_VALIDITY = Duration.ofDays(365);

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String SECRET = "rw-------";
  private static final String PUBLIC = "rw-r--r--";
  private static final String LABEL = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";

  /**
   * A DNS name of letters, digits and hyphens (a leading {@code *.} for a wildcard certificate).
   */
  private static final Pattern HOST_NAME =
      Pattern.compile("(\\*\\.)?" + LABEL + "(\\." + LABEL + ")*");

  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9a-f:.]+");

  private final X500Name name;
  private final KeyPair keys;
  private final X509Certificate certificate;

  private Certificates(X500Name name, KeyPair keys, X509Certificate certificate) {
    this.name = name;
    this.keys = keys;
    this.certificate = certificate;
  }

  /** A new self-signed CA named {@code cn}, valid from now for {@code validity}. */
  public static Certificates newAuthority(String cn, Duration validity) {
    try {
      KeyPair keys = newKeyPair();
      X500Name name = new X500Name("CN=" + cn);
      Instant now = Instant.now();
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  name,
                  serial(),
                  Date.from(now.minusSeconds(60)),
                  Date.from(now.plus(validity)),
                  name,
                  keys.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
              .addExtension(
                  Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  ext.createSubjectKeyIdentifier(keys.getPublic()));
      return new Certificates(name, keys, sign(b, keys));
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot create a CA certificate: " + e, e);
    }
  }

  /**
   * Writes {@code ca.crt} (and {@code ca.key}, owner-only) plus a node, a client and an admin
   * certificate into {@code dir}: everything {@code fencekeeper up --tls --certs dir} and the
   * client verbs use.
   */
  public static Certificates writeLocalSet(Path dir, Duration validity) {
    return writeLocalSet(dir, validity, List.of());
  }

  /**
   * As {@link #writeLocalSet(Path, Duration)}, the node certificate also naming {@code nodeNames}
   * (host names, or IP addresses), so that nodes on real hosts can be reached by those names.
   *
   * @throws IllegalArgumentException if a name is neither a host name nor an IP address; nothing is
   *     written
   */
  public static Certificates writeLocalSet(Path dir, Duration validity, List<String> nodeNames) {
    List<GeneralName> nodeSubjectNames = subjectNames(nodeNames);
    Certificates ca = newAuthority("fencekeeper-ca", validity);
    ca.writeAuthority(dir);
    Instant now = Instant.now();
    ca.issueNaming(dir, NODE, NODE_CN, now.minusSeconds(60), now.plus(validity), nodeSubjectNames);
    ca.issue(dir, CLIENT, CLIENT_CN, now.minusSeconds(60), now.plus(validity));
    ca.issue(dir, ADMIN, ADMIN_CN, now.minusSeconds(60), now.plus(validity));
    return ca;
  }

  /** Writes {@code ca.crt} and the CA's key {@code ca.key} into {@code dir}. */
  public void writeAuthority(Path dir) {
    write(dir.resolve("ca.crt"), pem(certificate), false);
    write(dir.resolve("ca.key"), pkcs8(keys.getPrivate()), true);
  }

  /**
   * The CA whose {@code ca.crt} and {@code ca.key} are in {@code dir} (as {@link #writeAuthority}
   * writes them), to issue more certificates from.
   *
   * @throws IllegalArgumentException if either file is missing or is not what it should be
   */
  public static Certificates loadAuthority(Path dir) {
    Path crt = dir.resolve("ca.crt");
    Path key = dir.resolve("ca.key");
    for (Path file : List.of(crt, key)) {
      if (!Files.isReadable(file)) {
        throw new IllegalArgumentException(
            file + " is missing or not readable: a certificate is issued by the CA in DIR");
      }
    }
    try (InputStream in = Files.newInputStream(crt);
        PEMParser pem = new PEMParser(Files.newBufferedReader(key, StandardCharsets.US_ASCII))) {
      X509Certificate certificate =
          (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      Object parsed = pem.readObject();
      if (!(parsed instanceof PrivateKeyInfo info)) {
        throw new IllegalArgumentException(key + " is not an unencrypted PKCS#8 private key");
      }
      PrivateKey privateKey = new JcaPEMKeyConverter().getPrivateKey(info);
      return new Certificates(
          X500Name.getInstance(certificate.getSubjectX500Principal().getEncoded()),
          new KeyPair(certificate.getPublicKey(), privateKey),
          certificate);
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot read the CA in " + dir + ": " + e.getMessage(), e);
    }
  }

  /** When this CA's certificate stops being valid: nothing it issues outlives it. */
  public Instant notAfter() {
    return certificate.getNotAfter().toInstant();
  }

  /**
   * Issues a certificate for subject CN {@code cn}, valid in [notBefore, notAfter], and writes
   * {@code <fileName>.crt} and {@code <fileName>.key} into {@code dir}.
   */
  public void issue(Path dir, String fileName, String cn, Instant notBefore, Instant notAfter) {
    issueNaming(dir, fileName, cn, notBefore, notAfter, subjectNames(List.of()));
  }

  /**
   * As {@link #issue(Path, String, String, Instant, Instant)}, the certificate also naming {@code
   * hostNames} (host names or IP addresses) besides 127.0.0.1 and localhost.
   *
   * @throws IllegalArgumentException if a name is neither a host name nor an IP address; nothing is
   *     written
   */
  public void issue(
      Path dir,
      String fileName,
      String cn,
      Instant notBefore,
      Instant notAfter,
      List<String> hostNames) {
    issueNaming(dir, fileName, cn, notBefore, notAfter, subjectNames(hostNames));
  }

  private void issueNaming(
      Path dir,
      String fileName,
      String cn,
      Instant notBefore,
      Instant notAfter,
      List<GeneralName> subjectNames) {
    try {
      KeyPair leaf = newKeyPair();
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  name,
                  serial(),
                  Date.from(notBefore),
                  Date.from(notAfter),
                  new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, cn).build(),
                  leaf.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(
                  Extension.keyUsage,
                  true,
                  new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement))
              .addExtension(
                  Extension.extendedKeyUsage,
                  false,
                  new ExtendedKeyUsage(
                      new KeyPurposeId[] {
                        KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                      }))
              .addExtension(
                  Extension.subjectAlternativeName,
                  false,
                  new GeneralNames(subjectNames.toArray(GeneralName[]::new)))
              .addExtension(
                  Extension.authorityKeyIdentifier,
                  false,
                  ext.createAuthorityKeyIdentifier(certificate))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  ext.createSubjectKeyIdentifier(leaf.getPublic()));
      X509Certificate issued = sign(b, keys);
      dir.toFile().mkdirs();
      write(dir.resolve(fileName + ".crt"), pem(issued), false);
      write(dir.resolve(fileName + ".key"), pkcs8(leaf.getPrivate()), true);
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot issue a certificate for " + cn + ": " + e, e);
    }
  }

  /** The files {@link #writeLocalSet} creates, for messages and tests. */
  public static List<String> localSetFiles() {
    return List.of(
        "ca.crt",
        "ca.key",
        "node.crt",
        "node.key",
        "client.crt",
        "client.key",
        "admin.crt",
        "admin.key");
  }

  /** 127.0.0.1 and localhost, then each of {@code names} not already among them. */
  private static List<GeneralName> subjectNames(List<String> names) {
    Set<String> all = new LinkedHashSet<>(List.of("127.0.0.1", "localhost"));
    for (String name : names) {
      all.add(name.strip().toLowerCase(Locale.ROOT));
    }
    List<GeneralName> subjectNames = new ArrayList<>();
    for (String name : all) {
      if (IPV4.matcher(name).matches() || name.contains(":")) {
        if (name.contains(":") && !IPV6.matcher(name).matches()) {
          throw new IllegalArgumentException(
              "'" + name + "' is neither a host name nor an IP address");
        }
        try {
          // GeneralName parses the literal itself, and refuses one that is not an address.
          subjectNames.add(new GeneralName(GeneralName.iPAddress, name));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("'" + name + "' is not an IP address", e);
        }
      } else if (HOST_NAME.matcher(name).matches() && name.length() <= 253) {
        subjectNames.add(new GeneralName(GeneralName.dNSName, name));
      } else {
        throw new IllegalArgumentException(
            "'" + name + "' is neither a host name nor an IP address");
      }
    }
    return subjectNames;
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return g.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter()
        .getCertificate(
            b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
  }

  /**
   * Unencrypted PKCS#8 ("BEGIN PRIVATE KEY"): the only key format Ratis's OpenSSL-based TLS reads.
   */
  private static String pkcs8(java.security.PrivateKey key) {
    try {
      return pem(new JcaPKCS8Generator(key, null));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String pem(Object object) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
      pem.writeObject(object);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  /**
   * Writes {@code text} to {@code file} through a temporary file created with its final mode (a key
   * is never readable by others, not even for a moment) and renamed over it: {@code rw-------} for
   * a secret, {@code rw-r--r--} for a certificate.
   */
  private static void write(Path file, String text, boolean secret) {
    Path parent = file.toAbsolutePath().getParent();
    Path tmp = null;
    try {
      Files.createDirectories(parent);
      boolean posix = Files.getFileStore(parent).supportsFileAttributeView("posix");
      tmp =
          posix
              ? Files.createTempFile(
                  parent,
                  "." + file.getFileName(),
                  ".tmp",
                  PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(SECRET)))
              : Files.createTempFile(parent, "." + file.getFileName(), ".tmp");
      Files.writeString(tmp, text, StandardCharsets.US_ASCII);
      if (posix) {
        Files.setPosixFilePermissions(
            tmp, PosixFilePermissions.fromString(secret ? SECRET : PUBLIC));
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
