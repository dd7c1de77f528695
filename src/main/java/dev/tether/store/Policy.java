package dev.tether.store;

import java.time.Instant;

/**
 * A tool policy as Executor stores it.
 *
 * @param id       {@code pol_…}
 * @param owner    whose list it is in
 * @param subject  the user whose list it is; {@code ""} for the organisation's
 * @param pattern  matched against {@code <integration>.<owner>.<connection>.<tool>}
 * @param action   what a matching call gets
 * @param position fractional-index key; lower sorts first and wins within its owner
 */
public record Policy(String id, Owner owner, String subject, String pattern, PolicyAction action, String position,
        Instant createdAt, Instant updatedAt) {
}
