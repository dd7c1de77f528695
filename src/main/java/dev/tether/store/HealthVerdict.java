package dev.tether.store;

import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of a connection health check, as Executor's {@code HealthCheckResult}.
 *
 * @param status    {@code healthy}, {@code expired}, {@code degraded} or {@code unknown}
 * @param checkedAt epoch milliseconds of the check
 * @param detail    why it is not healthy: the server's exit code and stderr tail, a timeout, ...
 */
public record HealthVerdict(String status, long checkedAt, Optional<String> detail) {

    public HealthVerdict {
        Objects.requireNonNull(status, "status");
        detail = detail == null ? Optional.empty() : detail;
    }

    public static HealthVerdict healthy(long checkedAt) {
        return new HealthVerdict("healthy", checkedAt, Optional.empty());
    }

    /** The server needs the user to authorize Tether again (Executor's {@code expired}). */
    public static HealthVerdict expired(long checkedAt, String detail) {
        return new HealthVerdict("expired", checkedAt, Optional.of(detail));
    }

    public static HealthVerdict degraded(long checkedAt, String detail) {
        return new HealthVerdict("degraded", checkedAt, Optional.of(detail));
    }
}
