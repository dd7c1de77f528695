package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test that drives the real Executor CLI ({@link ExecutorCli}). Without it installed the test is skipped with
 * a warning on a laptop and fails in CI, as {@link Prerequisites} decides.
 */
@Documented
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresExecutorCliExtension.class)
public @interface RequiresExecutorCli {
}
