/**
 * Executor's HTTP auth methods of an integration ({@code authenticationTemplate}): reading the apiKey authoring
 * dialect, slugs, the merge and replace of {@code configureAuth}, and the {@code authMethods} a UI lists. Plain
 * functions over Executor's JSON shapes, shared by every plugin whose integrations declare auth methods.
 */
@NullMarked
package dev.tether.httpauth;

import org.jspecify.annotations.NullMarked;
