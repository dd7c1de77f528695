package dev.tether.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.tether.testsupport.PackagedDaemon;

/**
 * Marks a test that runs the daemon inside the test JVM: surefire's job. {@code -Dit.test=dev.tether.api.**}
 * also hands these classes to failsafe (recognised by the {@code tether.jar} property it sets), which would
 * only run them a second time; there they are skipped. {@code *IT} classes are the converse: they need the
 * packaged jar and skip themselves without it.
 */
@Documented
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(InProcess.Condition.class)
@interface InProcess {

    final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return System.getProperty(PackagedDaemon.JAR_PROPERTY) == null ? ConditionEvaluationResult.enabled("in surefire")
                    : ConditionEvaluationResult.disabled("runs in surefire; failsafe runs the *IT tests against the jar");
        }
    }
}
