package dev.tether.policy;

/** A policy request that cannot be served as sent; the message names the offending field. */
public final class InvalidPolicyException extends RuntimeException {

    InvalidPolicyException(String message) {
        super(message);
    }
}
