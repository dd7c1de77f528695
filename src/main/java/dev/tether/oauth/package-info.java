/**
 * OAuth for remote MCP servers: discovery (RFC 9728 protected-resource metadata, RFC 8414 authorization-server
 * metadata with the OpenID configuration as fallback, its issuer checked), clients made by hand, by Tether's client
 * metadata document where the server takes one ({@code ClientMetadataDocument}) or by dynamic registration
 * (RFC 7591), the authorization-code flow with PKCE, {@code state} and the response's {@code iss} (RFC 9207), client
 * credentials, and the bearer tokens that remote sessions send, refreshed before they expire with one refresh per
 * connection at a time, and asked for with more scope when a server refused one for want of it.
 * Tokens and client secrets live sealed in the store and are never returned or logged.
 *
 * <p>Executor's OAuth routes are only mapped from HTTP in {@code api}: the bodies they read and check
 * ({@code OAuthRequests}), what they answer ({@code OAuthViews}, the {@code CallbackPage}) and the built-ins that are
 * their twins ({@code OAuthBuiltins}) are here, so a route and its built-in cannot drift apart.
 *
 * <p>Why it holds ~22 files: it is one protocol, and a third of them are its vocabulary (the exceptions a flow or a
 * token request ends with, {@code ProbeResult}, {@code TokenResponse}), a few lines each. The work is in
 * {@code OAuthClients}, {@code OAuthFlows}, {@code OAuthDiscovery}, {@code TokenEndpoint} and {@code OAuthTokens},
 * which share the package-private HTTP exchange ({@code OAuthHttp}) and endpoint checks ({@code Endpoints}) that
 * nothing outside OAuth may use to send secrets.
 */
@org.jspecify.annotations.NullMarked
package dev.tether.oauth;
