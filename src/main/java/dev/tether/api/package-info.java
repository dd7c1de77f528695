/**
 * Executor's HTTP API: the REST controllers, the one place where exceptions become Executor's tagged error
 * bodies ({@link dev.tether.api.ApiErrors}, with the two failures only a route raises: {@code PeerOnlyException},
 * {@code RemoteServerUnreachableException}), and request input ({@code api.input}). Controllers only map HTTP: they
 * read and check input, call the feature packages and answer with their views; what a route shares with the
 * built-in that is its twin lives in the feature ({@code oauth.OAuthRequests}, {@code openapi.OpenApiRequests}, …).
 * Nothing below this package knows HTTP.
 *
 * <p>Why it holds ~20 files: one controller per family of Executor's routes (OAuth's clients and flows are two),
 * each standing alone (no controller calls another), plus the error table. A folder per family would hold one class
 * (or two) each.
 */
@NullMarked
package dev.tether.api;

import org.jspecify.annotations.NullMarked;
