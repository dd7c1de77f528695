package dev.tether.testsupport;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/** The condition behind {@link RequiresDocker}. */
public final class RequiresDockerExtension implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        return Prerequisites.condition(DockerClientFactory.instance().isDockerAvailable(), "no Docker engine is reachable",
                ".ci/run starts dockerd", context);
    }
}
