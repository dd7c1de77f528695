/**
 * The HTTP server's own bounds, below the routes: how long a slow client may take to send a request and how many
 * connections are open at once ({@link dev.tether.http.SlowClients}, configured by {@code tether.http.*}).
 */
@NullMarked
package dev.tether.http;

import org.jspecify.annotations.NullMarked;
