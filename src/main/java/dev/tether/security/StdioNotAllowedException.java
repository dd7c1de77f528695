package dev.tether.security;

/** A stdio server was registered or changed over a non-loopback listener without the operator's consent. */
public final class StdioNotAllowedException extends RuntimeException {

    StdioNotAllowedException(String message) {
        super(message);
    }
}
