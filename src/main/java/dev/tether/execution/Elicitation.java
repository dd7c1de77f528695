package dev.tether.execution;

import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.tether.execution.Execution.Step;

/**
 * A server's question ({@code elicitation/create}) asked during a tool call of an execution: the execution pauses
 * on it as on an approval, and the resume's answer goes back to the server, whose call then goes on.
 *
 * @param request what the server asks: a form ({@link ElicitFormRequest}) or a URL ({@link ElicitUrlRequest})
 * @param answer  the server waits on it; an answer given once, by the resume or by the execution's end
 * @param outcome the asking call's answer handed to the code, for the drive that resumes the execution
 */
record Elicitation(ElicitRequest request, Sinks.One<ElicitResult> answer, Mono<Step> outcome) {

    boolean url() {
        return request instanceof ElicitUrlRequest;
    }
}
