/**
 * The store as every feature sees it: its records (integrations, connections, credentials' names, catalogs, verdicts,
 * policies, OAuth clients and grants), the store interfaces they are read and written through, their exceptions,
 * {@code tether.store.*}, whether the store is shared between replicas ({@code StoreSharing}) and still answers
 * ({@code StoreProbe}), and the reading of a column the schema declares {@code NOT NULL} ({@code Columns}).
 *
 * <p>The rest of the store sits around it in rooms of its own: where the rows are kept ({@code store.storage}, which
 * implements these interfaces), the sealing of secrets at rest ({@code store.secrets}), the change log between replicas
 * ({@code store.changes}) and the replicas' leases ({@code store.leases}). This package uses none of them.
 */
@NullMarked
package dev.tether.store;

import org.jspecify.annotations.NullMarked;
