package dev.fencekeeper.clientport;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.apache.ratis.thirdparty.io.grpc.Attributes;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.Contexts;
import org.apache.ratis.thirdparty.io.grpc.Grpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.ServerTransportFilter;

/**
 * Who is calling: the subject CN of the client's TLS certificate, empty on a plaintext connection.
 * Worked out once per connection, when its TLS handshake is done, and kept among the connection's
 * attributes, so a call costs one attribute lookup.
 */
public final class CallerIdentity extends ServerTransportFilter {
  private static final Attributes.Key<String> CALLER = Attributes.Key.create("fencekeeper.caller");

  /**
   * The caller of the call being served, as the service reads it. The client port's {@link
   * #interceptor} sets it from the connection; whoever calls the service in-process (a gateway that
   * authenticated its own client) sets it around the call, e.g. {@code
   * Context.current().withValue(CallerIdentity.CONTEXT, cn).run(...)}. Unset reads as "" (no
   * identity, as on a plaintext port).
   */
  public static final Context.Key<String> CONTEXT = Context.key("fencekeeper.caller");

  /** Sets {@link #CONTEXT} for every call from its connection's identity. */
  public static ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        return Contexts.interceptCall(
            Context.current().withValue(CONTEXT, of(call)), call, headers, next);
      }
    };
  }

  /** The caller of the call being served ({@link #CONTEXT}); "" when none was set. */
  public static String current() {
    String caller = CONTEXT.get();
    return caller == null ? "" : caller;
  }

  @Override
  public Attributes transportReady(Attributes transport) {
    return transport.toBuilder().set(CALLER, of(transport)).build();
  }

  /** The caller of {@code call}, from its connection. */
  public static String of(ServerCall<?, ?> call) {
    Attributes attributes = call.getAttributes();
    String known = attributes.get(CALLER);
    return known != null ? known : of(attributes);
  }

  private static String of(Attributes transport) {
    SSLSession session = transport.get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    if (session == null) {
      return "";
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate cert ? commonName(cert) : "";
    } catch (SSLPeerUnverifiedException e) {
      return "";
    }
  }

  /** The CN of {@code cert}'s subject; empty when it has none. */
  public static String commonName(X509Certificate cert) {
    try {
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        if ("CN".equalsIgnoreCase(rdn.getType())) {
          return rdn.getValue().toString();
        }
      }
      return "";
    } catch (InvalidNameException e) {
      return "";
    }
  }
}
