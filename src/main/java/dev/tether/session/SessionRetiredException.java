package dev.tether.session;

import dev.tether.store.ConnectionKey;

/** The pooled session was retired (idle, deleted, re-configured) while a lease waited for it. */
final class SessionRetiredException extends RuntimeException {

    SessionRetiredException(ConnectionKey key, String reason) {
        super("session of " + key + " was retired: " + reason);
    }
}
