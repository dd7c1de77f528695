/**
 * Code mode: sandboxed JavaScript sent to {@code POST /api/executions}, whose {@code tools.*} calls go through
 * {@code calls}; executions that a policy or a server marks for approval, or whose server asks the user a question
 * ({@code elicitation/create}), pause, holding a continuation and never a thread, until resumed or expired.
 */
@NullMarked
package dev.tether.execution;

import org.jspecify.annotations.NullMarked;
