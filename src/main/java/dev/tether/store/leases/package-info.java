/**
 * The replicas sharing a store, each by a lease it renews ({@code instance_lease}): what {@code replicas} reads to tell
 * the living from the dead, and the store's identity that replicas compare to know they share one store. A replica's
 * own lease is written on a database connection of its own ({@code OwnConnection}), outside the pool. Nothing of the
 * store's records or its in-memory copy is here, and the store does not use it: the leases are the replicas' table.
 */
@NullMarked
package dev.tether.store.leases;

import org.jspecify.annotations.NullMarked;
