/**
 * Replicas sharing one PostgreSQL store: each keeps a lease row alive, and when a replica's lease runs out (it died
 * without a goodbye: {@code kill -9}, a lost node) the first live peer to claim it removes the containers that
 * replica left on the shared Docker engine. Nothing here runs on an embedded store, which one process owns.
 */
@NullMarked
package dev.tether.replicas;

import org.jspecify.annotations.NullMarked;
