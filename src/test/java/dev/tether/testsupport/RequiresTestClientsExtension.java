package dev.tether.testsupport;

import java.util.Optional;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The condition behind {@link RequiresTestClients}. */
public final class RequiresTestClientsExtension implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<String> missing = NodeClients.missing().or(PythonClients::missing);
        return Prerequisites.condition(missing.isEmpty(), missing.orElse(""),
                ".ci/run runs npm install in src/test/clients and sets up .venv-test from src/test/python", context);
    }
}
