/**
 * The store: integrations, connections, credentials (sealed with AES-GCM), catalogs, verdicts and policies in
 * R2DBC (embedded H2 by default, PostgreSQL for replicas), fronted by an in-memory copy that the hot path reads.
 *
 * <p>Why it holds ~55 files: about half are the store's vocabulary (records, store interfaces and their
 * exceptions, a few lines each), which callers import together. The rest: one R2DBC class per table family
 * ({@code R2dbcStore}, {@code R2dbcPolicies}, {@code R2dbcOAuthClients}, {@code R2dbcPluginSettings}), the
 * in-memory front ({@code MemoryStore}, {@code CachedPolicies}, {@code StoreUpkeep}, which record their writes in the
 * change log of {@code store.changes} and read the other replicas' back) and the sealing of secrets at rest
 * ({@code SecretBox}, {@code SecretSlot}, {@code StoredSecrets}, {@code SecretsAtRest},
 * migration V42). Sealing is not a package of its own because its slots name the store's rows
 * ({@code ConnectionKey}, {@code Owner}) while the store seals through it: it would be a cycle.
 */
@NullMarked
package dev.tether.store;

import org.jspecify.annotations.NullMarked;
