package dev.tether.store;

import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Credential values of connections, kept in a table of their own and never part of what the API returns.
 * For a stdio server they are environment variables of its child, for a remote one request headers.
 */
public interface CredentialStore {

    /** The values, or an empty map when the connection has none. */
    Mono<Map<String, String>> credentials(ConnectionKey key);

    /** Which values are kept, by connection and name, in key order: never the values themselves. */
    Flux<CredentialName> names();

    /** One kept value's place: the connection it belongs to and its variable's name. */
    record CredentialName(ConnectionKey connection, String name) {
    }
}
