package dev.fencekeeper.core;

/**
 * A protected value: its bytes, the highest token whose write it accepted, how many writes it
 * accepted and the state-machine time of the last one. Immutable; the bytes are never modified
 * after a write.
 */
public record ValueRecord(byte[] value, long acceptedToken, long version, long writtenAtMs) {}
