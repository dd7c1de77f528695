/**
 * Executor's HTTP API: the REST controllers, the one place where exceptions become Executor's tagged error
 * bodies ({@link dev.tether.api.ApiErrors}), Tether's own OpenAPI document and the kept answer of
 * {@code GET /api/tools}. Controllers validate input ({@code api.input}), call the feature packages and
 * answer with {@code views}; nothing below this package knows HTTP.
 */
@NullMarked
package dev.tether.api;

import org.jspecify.annotations.NullMarked;
