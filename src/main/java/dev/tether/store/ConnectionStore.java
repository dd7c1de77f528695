package dev.tether.store;

import java.util.Optional;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Connections of integrations and their last health verdicts. */
public interface ConnectionStore {

    /** Saves a new connection; fails with {@link ConnectionAlreadyExistsException} when the key is taken. */
    Mono<Connection> create(Connection connection);

    Mono<Connection> find(ConnectionKey key);

    Flux<Connection> all(Optional<String> integration, Optional<Owner> owner);

    Mono<Boolean> delete(ConnectionKey key);

    /** Persists a verdict as the connection's {@code lastHealth}; empty when the connection is gone. */
    Mono<Connection> saveHealth(ConnectionKey key, HealthVerdict verdict);
}
