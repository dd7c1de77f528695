package dev.tether.execution;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Resumes a paused execution wherever it is held, given only its id: on this replica, or on the replica its id names
 * (an MCP 2026-07-28 retry carries nothing but a {@code requestState}, and a load balancer sends it anywhere). The one
 * door through which a request that is not bound to a replica resumes an execution: on the live context where one is
 * held, else rebuilt from its journal here. Fails as {@link Executions#resume} does: {@link ExecutionNotFoundException} when nothing is paused under
 * the id (finished, expired, or resumed already), {@link ResumeContentException} when the content does not
 * match the question, and the execution stays paused.
 */
@FunctionalInterface
public interface ResumeAnywhere {

    Mono<ExecutionAnswer> resume(String executionId, ResumeAction action, @Nullable Map<String, Object> content);
}
