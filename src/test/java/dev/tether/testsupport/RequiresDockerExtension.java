package dev.tether.testsupport;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/** The condition behind {@link RequiresDocker}. */
public final class RequiresDockerExtension implements ExecutionCondition {

    static final String SKIP_REASON = "no Docker engine: Docker tests skipped";

    private static final Set<String> reported = ConcurrentHashMap.newKeySet();

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (DockerClientFactory.instance().isDockerAvailable()) {
            return ConditionEvaluationResult.enabled("Docker engine reachable");
        }
        if (dockerRequired()) {
            throw new IllegalStateException("no Docker engine is reachable, and CI requires one"
                    + " (CI=true or -Dtether.require-docker=true): " + context.getDisplayName());
        }
        String where = context.getRequiredTestClass().getName()
                + context.getTestMethod().map(m -> "#" + m.getName()).orElse("");
        if (reported.add(context.getRequiredTestClass().getName())) {
            System.err.println("[WARNING] " + SKIP_REASON + " (" + where + ")");
        }
        return ConditionEvaluationResult.disabled(SKIP_REASON);
    }

    static boolean dockerRequired() {
        return "true".equalsIgnoreCase(System.getenv("CI"))
                || Boolean.parseBoolean(System.getProperty("tether.require-docker"));
    }
}
