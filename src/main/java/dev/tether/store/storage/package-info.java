/**
 * Where the store's rows are kept and how: R2DBC over embedded H2 by default or PostgreSQL for replicas, one class per
 * table family ({@code R2dbcStore}, {@code R2dbcPolicies}, {@code R2dbcOAuthClients}, {@code R2dbcPluginSettings},
 * {@code R2dbcSignedInUsers}, {@code R2dbcExecutionJournals}), fronted by the in-memory copy every other package reads
 * through the store's interfaces ({@code MemoryStore}, {@code CachedPolicies}), its timers ({@code StoreUpkeep}), the one
 * place where rows meet principals ({@code OwnerScope}), a start's migration ({@code StoreMigration}) and the embedded
 * H2's threads and durability.
 *
 * <p>Nothing here is public: Spring wires each class behind an interface of {@code store}. It seals and opens secret
 * values through {@code store.secrets} and records its writes in the change log of {@code store.changes}.
 */
@NullMarked
package dev.tether.store.storage;

import org.jspecify.annotations.NullMarked;
