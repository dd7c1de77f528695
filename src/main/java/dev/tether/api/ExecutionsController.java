package dev.tether.api;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAction;
import dev.tether.api.input.InvalidInputException;
import dev.tether.execution.ResumeContentException;

/** Executor's executions: code that calls tools, paused for approvals and servers' questions. A client that leaves cancels the run. */
@RestController
final class ExecutionsController {

    public record ExecuteRequest(String code) {
    }

    /** {@code content} answers a server's form; an approval has none, so it is accepted and not used. */
    public record ResumeRequest(String action, @Nullable Object content) {
    }

    private final Executions executions;

    ExecutionsController(Executions executions) {
        this.executions = executions;
    }

    @PostMapping("/api/executions")
    Mono<ExecutionAnswer> execute(@RequestBody ExecuteRequest request) {
        return Mono.fromCallable(() -> {
            if (request.code() == null) {
                throw InvalidInputException.decode("`code` is required and must be a string");
            }
            return request.code();
        }).flatMap(executions::execute);
    }

    @GetMapping("/api/executions/{executionId}")
    Mono<ExecutionAnswer.Pause> paused(@PathVariable String executionId) {
        return executions.paused(executionId);
    }

    @PostMapping("/api/executions/{executionId}/resume")
    Mono<ExecutionAnswer> resume(@PathVariable String executionId, @RequestBody ResumeRequest request) {
        return Mono.fromCallable(() -> ResumeAction.parse(request.action()).orElseThrow(() -> InvalidInputException.decode(
                        "`action` must be \"accept\", \"decline\" or \"cancel\", was " + quoted(request.action()))))
                .flatMap(action -> executions.resume(executionId, action, content(request.content())))
                .onErrorMap(ResumeContentException.class, wrong -> InvalidInputException.decode(wrong.getMessage()));
    }

    @SuppressWarnings("unchecked")
    private static @Nullable Map<String, Object> content(@Nullable Object content) {
        if (content != null && !(content instanceof Map<?, ?>)) {
            throw InvalidInputException.decode("`content` must be an object when given");
        }
        return (Map<String, Object>) content;
    }

    private static String quoted(String value) {
        return value == null ? "missing" : "\"" + value + "\"";
    }
}
