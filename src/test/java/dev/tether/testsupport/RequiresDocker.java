package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class or method that needs a Docker engine. Without one it is skipped (reason
 * "no Docker engine: Docker tests skipped", also printed to stderr so it shows in Maven's
 * output) — unless the environment variable {@code CI} is {@code true} or the system property
 * {@code tether.require-docker} is {@code true}, in which case it fails.
 */
@Documented
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("docker")
@ExtendWith(RequiresDockerExtension.class)
public @interface RequiresDocker {
}
