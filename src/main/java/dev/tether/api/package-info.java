/**
 * Executor's HTTP API: the REST controllers, the one place where exceptions become Executor's tagged error
 * bodies ({@link dev.tether.api.ApiErrors}), Tether's own OpenAPI document and the kept answer of
 * {@code GET /api/tools}. Controllers validate input ({@code api.input}), call the feature packages and
 * answer with {@code views}; nothing below this package knows HTTP.
 *
 * <p>Why it holds ~20 files: one controller per family of Executor's routes, each standing alone (no controller
 * calls another), plus the error table. A folder per family would hold one class each.
 */
@NullMarked
package dev.tether.api;

import org.jspecify.annotations.NullMarked;
