/**
 * Code mode: sandboxed JavaScript sent to {@code POST /api/executions}, whose {@code tools.*} calls go through
 * {@code calls}; executions that a policy or a server marks for approval, or whose server asks the user a question
 * ({@code elicitation/create}), pause, holding a continuation and never a thread, until resumed or expired.
 *
 * <p>Why it holds ~27 files: code mode is one job with three parts that call each other in both directions (an
 * {@code Execution} runs on the pool, the memory watch stops an execution, a paused call resumes through
 * {@code Executions}); the JavaScript side ({@code JsEngine}, {@code Prelude}, {@code JsJson}, {@code ResultClone},
 * {@code ConsoleOutput}, {@code Settled}) and the limits ({@code ExecutionPool}, {@code MemoryWatch},
 * {@code Allocations}) are each a handful of small classes, and split into packages of their own they would import
 * this one and be imported by it.
 */
@NullMarked
package dev.tether.execution;

import org.jspecify.annotations.NullMarked;
