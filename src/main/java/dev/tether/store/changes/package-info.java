/**
 * The change log between replicas: the {@code store_change} table a replica appends one row to per write
 * ({@code StoreChanges}), PostgreSQL's announcements of each row ({@code ChangeSignals}), and how far this replica has
 * followed the log ({@code StorePosition}), which a forwarded request waits for.
 *
 * <p>It sits below the store: the store's in-memory copy records its writes here and reads the others' back, while
 * this package knows nothing of the store's records. An item is a plain string; which row it names is the store's
 * business. Public is only what the store's copy and its upkeep call, and what a forwarded request waits with.
 */
@NullMarked
package dev.tether.store.changes;

import org.jspecify.annotations.NullMarked;
