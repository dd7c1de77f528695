package dev.tether.execution;

/** Every place for an execution is taken and so is every place in the queue before them. */
final class ExecutionRefusedException extends RuntimeException {

    ExecutionRefusedException(int maxConcurrent, int maxQueued) {
        super("too many executions at once: " + maxConcurrent + " run and " + maxQueued
                + " wait (tether.execution.max-concurrent, tether.execution.max-queued); try again when one has ended");
    }
}
