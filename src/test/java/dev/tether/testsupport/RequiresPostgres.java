package dev.tether.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test that needs the PostgreSQL server named by {@link PostgresDatabase}. Without one it is skipped
 * on a laptop and fails in CI ({@code CI=true}), where {@code .ci/run} starts one.
 */
@Documented
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Tag("postgres")
@ExtendWith(PostgresDatabase.Condition.class)
public @interface RequiresPostgres {
}
