package dev.fencekeeper.client;

import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import java.time.Duration;

/** The request envelopes of {@link FencingClient}'s one-request calls. */
final class Requests {
  private Requests() {}

  /** A null {@code ttl} keeps the lease's own TTL. */
  static Request renew(String resource, long token, Duration ttl) {
    RenewRequest.Builder renew = RenewRequest.newBuilder().setResource(resource).setToken(token);
    if (ttl != null) {
      renew.setTtlMs(ttl.toMillis());
    }
    return Request.newBuilder().setRenew(renew).build();
  }

  static Request release(String resource, long token) {
    return Request.newBuilder()
        .setRelease(ReleaseRequest.newBuilder().setResource(resource).setToken(token))
        .build();
  }

  static Request revoke(String resource, String reason) {
    return Request.newBuilder()
        .setRevoke(
            RevokeRequest.newBuilder()
                .setResource(resource)
                .setReason(reason == null ? "" : reason))
        .build();
  }

  static Request read(String resource, String key) {
    return Request.newBuilder()
        .setRead(ReadRequest.newBuilder().setResource(resource).setKey(key))
        .build();
  }

  static Request lease(String resource) {
    return Request.newBuilder().setLease(LeaseQuery.newBuilder().setResource(resource)).build();
  }

  static Request validate(String resource, long token) {
    return Request.newBuilder()
        .setValidate(ValidateRequest.newBuilder().setResource(resource).setToken(token))
        .build();
  }

  static Request list(
      ListRequest.What what, String resource, String prefix, String after, int limit) {
    return Request.newBuilder()
        .setList(
            ListRequest.newBuilder()
                .setWhat(what)
                .setResource(resource)
                .setPrefix(prefix)
                .setAfter(after)
                .setLimit(limit))
        .build();
  }
}
