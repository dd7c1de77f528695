package dev.tether.execution;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonRawValue;
import org.jspecify.annotations.Nullable;

/**
 * Executor's answer to an execution: {@code completed {text, structured, isError}} or {@code paused {text,
 * structured}}. {@code structured} is JSON text the host writes from the guest's value ({@link ResultClone}), never
 * the guest's own {@code JSON.stringify}, so guest code cannot change the envelope; numbers and strings read as they
 * would in Executor.
 */
@JsonPropertyOrder({"status", "text", "structured", "isError"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ExecutionAnswer(String status, String text, @JsonRawValue @Nullable String structured, @Nullable Boolean isError) {

    static ExecutionAnswer completed(String text, String structured, boolean isError) {
        return new ExecutionAnswer("completed", text, structured, isError);
    }

    static ExecutionAnswer paused(String text, String structured) {
        return new ExecutionAnswer("paused", text, structured, null);
    }

    /** What {@code GET /api/executions/{id}} shows of a pause. */
    @JsonPropertyOrder({"text", "structured"})
    public record Pause(String text, @JsonRawValue String structured) {
    }
}
