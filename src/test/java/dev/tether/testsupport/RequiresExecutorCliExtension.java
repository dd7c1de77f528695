package dev.tether.testsupport;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The condition behind {@link RequiresExecutorCli}. */
public final class RequiresExecutorCliExtension implements ExecutionCondition {

    static final String SKIP_REASON = "the Executor CLI is not installed in src/test/clients: Executor CLI tests skipped";

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (ExecutorCli.installed().isPresent()) {
            return ConditionEvaluationResult.enabled("Executor CLI installed");
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException(SKIP_REASON.replace(": Executor CLI tests skipped", "")
                    + ", and CI requires it: " + context.getDisplayName());
        }
        System.err.println("[WARNING] " + SKIP_REASON + " (" + context.getRequiredTestClass().getName() + ")");
        return ConditionEvaluationResult.disabled(SKIP_REASON);
    }
}
