package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The one rule for what a test needs from the machine (Docker, PostgreSQL, Chromium, HAProxy, the Node clients, an
 * immutable-file flag, an exposed address...). On a laptop a missing piece skips the test with a warning that names
 * it. In CI ({@code CI=true}, or {@code -Dtether.require-docker=true}) it fails the test, naming the piece and what
 * provides it: a judge that quietly does not run is a green build that proved nothing. A test that cannot apply on
 * this kernel at all says why with {@link #notApplicable}, and is skipped even in CI, its reason in the report.
 */
public final class Prerequisites {

    private static final Set<String> warned = ConcurrentHashMap.newKeySet();

    private Prerequisites() {
    }

    /** Whether every prerequisite is required: on CI, or when asked for with {@code -Dtether.require-docker=true}. */
    public static boolean required() {
        return "true".equalsIgnoreCase(System.getenv("CI")) || Boolean.getBoolean("tether.require-docker");
    }

    /**
     * Inside a test: returns when {@code present}; otherwise fails in CI or skips, naming {@code missing} (what is not
     * here) and {@code provider} (what installs or starts it).
     */
    public static void require(boolean present, String missing, String provider) {
        if (present) {
            return;
        }
        if (required()) {
            fail(missing + ", and CI runs every test (" + provider + ")");
        }
        warnOnce(missing, missing);
        Assumptions.abort(missing + " (" + provider + ")");
    }

    /** For an {@link org.junit.jupiter.api.extension.ExecutionCondition}: enabled, skipped, or (in CI) an error. */
    public static ConditionEvaluationResult condition(boolean present, String missing, String provider, ExtensionContext context) {
        if (present) {
            return ConditionEvaluationResult.enabled("has what it needs");
        }
        if (required()) {
            throw new IllegalStateException(missing + ", and CI runs every test (" + provider + "): "
                    + context.getRequiredTestClass().getName() + context.getTestMethod().map(m -> "#" + m.getName()).orElse(""));
        }
        warnOnce(missing + "|" + context.getRequiredTestClass().getName(), missing + " (" + context.getRequiredTestClass().getName() + ")");
        return ConditionEvaluationResult.disabled(missing + " (" + provider + ")");
    }

    /**
     * Skips the test everywhere, CI included, because what it judges does not exist here ({@code why} says what the
     * kernel or JVM lacks); the reason is in the test report, and {@code .ci/run} lists every skip at the end.
     */
    public static void notApplicable(boolean applies, String why) {
        if (!applies) {
            warnOnce(why, "not applicable here: " + why);
            Assumptions.abort("not applicable here: " + why);
        }
    }

    private static void warnOnce(String key, String message) {
        if (warned.add(key)) {
            System.err.println("[WARNING] " + message + ": skipped");
        }
    }
}
