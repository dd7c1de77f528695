/**
 * Executor's HTTP API: the REST controllers, the one place where exceptions become Executor's tagged error
 * bodies ({@link dev.tether.api.ApiErrors}), Tether's own OpenAPI document and the kept answer of
 * {@code GET /api/tools}. Controllers validate input ({@code api.input}), call the feature packages and
 * answer with {@code views}; nothing below this package knows HTTP.
 *
 * <p>Why it holds ~22 files: one controller per family of Executor's routes (OAuth's clients and flows are two),
 * each standing alone (no controller calls another), plus the error table. A folder per family would hold one class
 * (or two) each.
 */
@NullMarked
package dev.tether.api;

import org.jspecify.annotations.NullMarked;
