package dev.fencekeeper.core;

/**
 * What an accepted write with a request id answered, remembered so that a retry of it returns the
 * same answer and changes nothing.
 */
public record WriteReceipt(String requestId, String firstKey, long version, long writtenAtMs) {}
