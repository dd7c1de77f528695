package dev.tether.execution;

/** No paused execution has this id (never existed, finished, resumed already or expired). */
public final class ExecutionNotFoundException extends RuntimeException {

    private final String executionId;

    public ExecutionNotFoundException(String executionId) {
        super("no paused execution '" + executionId + "'");
        this.executionId = executionId;
    }

    public String executionId() {
        return executionId;
    }
}
