package dev.tether.api;

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

/** Executor's executions: code that calls tools, paused for approvals. A client that leaves cancels the run. */
@RestController
final class ExecutionsController {

    public record ExecuteRequest(String code) {
    }

    /** {@code content} answers a form elicitation; an approval has none, so it is accepted and not used. */
    public record ResumeRequest(String action, Object content) {
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
                .flatMap(action -> executions.resume(executionId, action));
    }

    private static String quoted(String value) {
        return value == null ? "missing" : "\"" + value + "\"";
    }
}
