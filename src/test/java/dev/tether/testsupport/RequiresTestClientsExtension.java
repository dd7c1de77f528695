package dev.tether.testsupport;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The condition behind {@link RequiresTestClients}. */
public final class RequiresTestClientsExtension implements ExecutionCondition {

    private static final Set<String> reported = ConcurrentHashMap.newKeySet();

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String missing = NodeClients.missing().or(PythonClients::missing).orElse(null);
        if (missing == null) {
            return ConditionEvaluationResult.enabled("node and the test clients are installed");
        }
        if (RequiresDockerExtension.dockerRequired()) {
            throw new IllegalStateException(missing + ", and CI requires the test clients (CI=true or"
                    + " -Dtether.require-docker=true): " + context.getDisplayName());
        }
        String reason = missing + ": tests with the real MCP clients skipped";
        if (reported.add(context.getRequiredTestClass().getName())) {
            System.err.println("[WARNING] " + reason + " (" + context.getRequiredTestClass().getName() + ")");
        }
        return ConditionEvaluationResult.disabled(reason);
    }
}
