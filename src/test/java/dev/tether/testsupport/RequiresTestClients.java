package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test that drives Tether with the real clients: the Node ones of {@code src/test/clients} (the TypeScript MCP SDK,
 * 1.x and 2.x, the MCP Inspector CLI) and the Python one of {@code src/test/python} (the Python MCP SDK, in
 * {@code .venv-test}). Without them it is skipped with a warning on a laptop and fails in CI, as {@link Prerequisites}
 * decides.
 */
@Documented
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresTestClientsExtension.class)
public @interface RequiresTestClients {
}
