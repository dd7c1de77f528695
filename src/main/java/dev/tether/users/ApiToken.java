package dev.tether.users;

import java.time.Instant;
import java.util.Optional;

import dev.tether.identity.Role;

/**
 * A personal API token as Tether keeps it: never its secret, which only its holder has.
 *
 * @param id         {@code tok_…}, the part of the token that names it (safe to show and to log)
 * @param subject    whose it is: the principal it authenticates as
 * @param name       what its holder called it
 * @param role       what it may do: at most its owner's role
 * @param createdBy  the subject that issued it (an admin may issue tokens for others)
 * @param revokedAt  when it was revoked; empty while it is not
 * @param lastUsedAt when it was last seen (to the minute); empty when never
 */
public record ApiToken(String id, String subject, String name, Role role, String createdBy, Instant createdAt, Instant expiresAt,
        Optional<Instant> revokedAt, Optional<Instant> lastUsedAt) {

    /** Whether it lets its holder in at {@code now}: not revoked, not expired. */
    public boolean active(Instant now) {
        return revokedAt.isEmpty() && now.isBefore(expiresAt);
    }
}
