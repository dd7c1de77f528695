package dev.tether.store;

import java.util.Map;

import reactor.core.publisher.Mono;

/**
 * Credential values of connections, kept apart from everything the API returns. For a stdio server they
 * are environment variables of its child.
 */
public interface CredentialStore {

    Mono<Void> saveCredentials(ConnectionKey key, Map<String, String> values);

    /** The values, or an empty map when the connection has none. */
    Mono<Map<String, String>> credentials(ConnectionKey key);
}
