package dev.tether.daemon;

import org.springframework.boot.SpringBootExceptionReporter;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Prints a {@link StartupFailure} as its one line on stderr and tells Spring Boot it was reported, so Boot neither
 * logs "Application run failed" with a stack trace nor a failure-analysis block. Registered in
 * {@code META-INF/spring.factories}.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class StartupFailureReporter implements SpringBootExceptionReporter {

    @Override
    public boolean reportException(Throwable failure) {
        return StartupFailure.in(failure).map(found -> {
            System.err.println("tether: " + found.getMessage());
            return true;
        }).orElse(false);
    }
}
