/**
 * The store: integrations, connections, credentials (sealed with AES-GCM), catalogs, verdicts and policies in
 * R2DBC (embedded H2 by default, PostgreSQL for replicas), fronted by an in-memory copy that the hot path reads.
 */
@NullMarked
package dev.tether.store;

import org.jspecify.annotations.NullMarked;
