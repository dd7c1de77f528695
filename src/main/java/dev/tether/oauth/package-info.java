/**
 * OAuth for remote MCP servers: discovery (RFC 9728 protected-resource metadata, RFC 8414 authorization-server
 * metadata with the OpenID configuration as fallback), clients made by hand or by dynamic registration
 * (RFC 7591), the authorization-code flow with PKCE and {@code state}, client credentials, and the bearer tokens
 * that remote sessions send, refreshed before they expire with one refresh per connection at a time.
 * Tokens and client secrets live sealed in the store and are never returned or logged.
 */
@org.jspecify.annotations.NullMarked
package dev.tether.oauth;
