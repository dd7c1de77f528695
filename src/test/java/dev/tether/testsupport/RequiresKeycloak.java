package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test that needs the Keycloak named by {@link Keycloak} (realm {@code tether}). Without one it is skipped on a
 * laptop and fails in CI ({@code CI=true}), where {@code .ci/run} starts one, once for the whole run.
 */
@Documented
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Tag("keycloak")
@ExtendWith(Keycloak.Condition.class)
public @interface RequiresKeycloak {
}
