package dev.tether.store;

import java.util.Map;
import java.util.Optional;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Connections of integrations and their last health verdicts. */
public interface ConnectionStore {

    /**
     * Saves a new connection with its credential values, both or neither; fails with
     * {@link ConnectionAlreadyExistsException} when the key is taken and with
     * {@link IntegrationNotFoundException} when its integration does not exist.
     */
    Mono<Connection> create(Connection connection, Map<String, String> credentials);

    /** Replaces a connection's label and, when given, its credential values; empty when it does not exist. */
    Mono<Connection> update(Connection connection, Optional<Map<String, String>> credentials);

    Mono<Connection> find(ConnectionKey key);

    Flux<Connection> all(Optional<String> integration, Optional<Owner> owner);

    Mono<Boolean> delete(ConnectionKey key);

    /** Persists a verdict as the connection's {@code lastHealth}; emits false when the connection is gone. */
    Mono<Boolean> saveHealth(ConnectionKey key, HealthVerdict verdict);

    /**
     * Connections whose verdict another replica sharing the store reached, as this replica learns of them (from now
     * on); never anything on a store no other replica shares.
     */
    Flux<Connection> verdictsOfPeers();
}
