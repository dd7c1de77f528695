/**
 * The HTTP server's own bounds, below the routes: how long a slow client may take to send a request and how many
 * connections are open at once ({@link dev.tether.server.SlowClients}, configured by {@code tether.server.*}).
 */
@NullMarked
package dev.tether.server;

import org.jspecify.annotations.NullMarked;
