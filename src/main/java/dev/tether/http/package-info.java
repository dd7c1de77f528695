/**
 * Outbound HTTP of OpenAPI and GraphQL sources: one bounded client on Reactor Netty (timeouts, answer size,
 * redirects, a connection closed when its caller leaves) and the authentication templates that put a connection's
 * credential on a request. Knows nothing of specs or schemas.
 */
@NullMarked
package dev.tether.http;

import org.jspecify.annotations.NullMarked;
