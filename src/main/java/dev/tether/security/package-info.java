/**
 * Who may call: the bearer token (generated and kept in the data dir), its filter, the {@code Host}/{@code Origin}
 * filter against DNS rebinding and web pages, and the gate that can forbid stdio servers. The API's own
 * settings ({@code tether.api.*}) live here because the filters are their main readers.
 */
@NullMarked
package dev.tether.security;

import org.jspecify.annotations.NullMarked;
