package dev.tether.identity;

import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One entry of the audit trail: who ({@code principal}, null for a request that proved no identity), did what
 * ({@code action}: {@code request}, {@code connection.create}, {@code tool.call}, {@code execution.resume}, {@code sign-in},
 * …) to what ({@code target}: a route's method and path, a row's name, a tool's address: never a query string, a body or a
 * value), and how it ended ({@code outcome}, with the HTTP {@code status} for a request). Nothing here is ever a secret.
 */
public record AuditEvent(Instant at, @Nullable Principal principal, String action, String target, String outcome,
        @Nullable Integer status, @Nullable String detail) {

    public AuditEvent {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(outcome, "outcome");
    }

    public static AuditEvent of(Principal principal, String action, String target, String outcome) {
        return new AuditEvent(Instant.now(), principal, action, target, outcome, null, null);
    }
}
