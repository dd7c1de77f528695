package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * Marks an integration test that failsafe runs on its own, after the others (which run side by side): replicas on a
 * short lease, which a CPU shared with another test could starve past it. Which is a reason to make the product
 * survive a starved replica (a death confirmed before acting on it), not to starve it here and call that a test.
 */
@Documented
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("alone")
public @interface RunsAlone {
}
