package dev.tether.store;

import reactor.core.publisher.Mono;

/**
 * A plugin's own settings, as Executor keeps plugin blobs: a text value (JSON) per plugin, owner and name, sealed at
 * rest because a setting may hold a token. Tether keeps them in its database, so every replica sees the same.
 */
public interface PluginSettings {

    /** The value kept under this name, the caller's own before the organisation's; empty when there is none. */
    Mono<String> get(String plugin, String name);

    /** Keeps {@code value} under this name for {@code owner} (the caller itself for {@code user}), replacing what was there. */
    Mono<Void> put(String plugin, Owner owner, String name, String value);

    /** Forgets the value under this name for {@code owner}; nothing to forget is no failure. */
    Mono<Void> delete(String plugin, Owner owner, String name);
}
