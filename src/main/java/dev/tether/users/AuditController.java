package dev.tether.users;

import java.time.DateTimeException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principals;
import dev.tether.identity.Role;

/**
 * Tether's own: the audit trail, for admins. {@code GET /api/audit?subject=&action=&outcome=&since=&before=&limit=} answers
 * {@code {events: [...], next}}, newest first; {@code next} is the {@code before} of the next page, null on the last.
 */
@RestController
final class AuditController {

    private static final int DEFAULT_LIMIT = 100;

    private final AuditTrail trail;

    AuditController(AuditTrail trail) {
        this.trail = trail;
    }

    @GetMapping("/api/audit")
    Mono<Map<String, Object>> events(@RequestParam(required = false) String subject, @RequestParam(required = false) String action,
            @RequestParam(required = false) String outcome, @RequestParam(required = false) String since,
            @RequestParam(required = false) String before, @RequestParam(required = false) String limit) {
        InvalidRequestException.bounded("subject", subject, 255);
        InvalidRequestException.bounded("action", action, 64);
        InvalidRequestException.bounded("outcome", outcome, 32);
        InvalidRequestException.bounded("since", since, 64);
        InvalidRequestException.bounded("before", before, 20);
        InvalidRequestException.bounded("limit", limit, 10);
        return Principals.current().flatMap(caller -> {
            if (caller.role() != Role.ADMIN) {
                return Mono.error(new NotPermittedException(caller, "read the audit trail"));
            }
            int size = number("limit", limit).map(Math::toIntExact).orElse(DEFAULT_LIMIT);
            if (size < 1 || size > 1000) {
                return Mono.error(new InvalidRequestException("`limit` must be between 1 and 1000, was " + size));
            }
            AuditTrail.Filter filter = new AuditTrail.Filter(optional(subject), optional(action), optional(outcome),
                    instant(since), number("before", before), size);
            return trail.query(filter).collectList().map(events -> page(events, size));
        });
    }

    private static Map<String, Object> page(List<AuditTrail.Stored> events, int size) {
        @Nullable Long next = events.size() == size ? events.get(events.size() - 1).seq() : null;
        java.util.LinkedHashMap<String, Object> answer = new java.util.LinkedHashMap<>();
        answer.put("events", events);
        answer.put("next", next);
        return answer;
    }

    private static Optional<String> optional(@Nullable String value) {
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    private static Optional<Long> number(String field, @Nullable String value) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(value));
        }
        catch (NumberFormatException notANumber) {
            throw new InvalidRequestException("`" + field + "` must be a whole number, was \"" + value + "\"");
        }
    }

    private static Optional<Instant> instant(@Nullable String value) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.parse(value));
        }
        catch (DateTimeException notAnInstant) {
            throw new InvalidRequestException("`since` must be an ISO-8601 instant (2027-01-31T00:00:00Z), was \"" + value + "\"");
        }
    }
}
