/**
 * How a request reaches the replica that should serve it, and how replicas serve one another: the peers' client
 * ({@link dev.tether.replicas.forwarding.PeerExchange}, which signs each request), the reverse proxy
 * ({@link dev.tether.replicas.forwarding.PeerRelay}) and tool calls at a peer, the web
 * filters that forward a request to its connection's owner or to the replica holding its execution or session, the
 * peers' authentication and store catch-up, the lease gate and fenced starts, and the adapters through which the
 * feature packages ask a connection's owner (tool calls, catalog syncs, health checks, resumes). It sits apart from
 * {@code api}, which is the HTTP face (controllers, error mapping, input), so that whoever changes how requests travel
 * between replicas finds it in one room; it is above the features it forwards for and below the controllers of the
 * peers' own routes, and {@code replicas} (leases, owners, credentials) knows nothing of it.
 */
@NullMarked
package dev.tether.replicas.forwarding;

import org.jspecify.annotations.NullMarked;
