/**
 * Internal to fencekeeper: the wire messages of {@code fencing.proto} behind the client's public
 * types, and the codecs the client and the nodes share. Not an API for applications: what it
 * exposes changes with {@code fencing.proto} and with how protobuf is packaged. Applications use
 * {@link dev.fencekeeper.client}.
 */
package dev.fencekeeper.client.wire;
