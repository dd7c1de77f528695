package dev.tether.testsupport;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The condition behind {@link RequiresExecutorCli}. */
public final class RequiresExecutorCliExtension implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        return Prerequisites.condition(ExecutorCli.installed().isPresent(), "the Executor CLI is not installed in src/test/clients",
                ".ci/run runs npm install there", context);
    }
}
