package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test that drives Tether with the real Node clients of {@code src/test/clients} (the TypeScript MCP SDK,
 * the MCP Inspector CLI). Without {@code node} or those packages it is skipped with a warning on a laptop and fails
 * in CI, as {@link Prerequisites} decides.
 */
@Documented
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresTestClientsExtension.class)
public @interface RequiresTestClients {
}
