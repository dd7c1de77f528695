package dev.tether.identity;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * What a principal may do, each role all that the one before it may:
 * <ul>
 * <li>{@code viewer} reads what it sees, and changes nothing;
 * <li>{@code member} uses the organisation's connections, owns personal ones (its {@code owner: "user"} rows) and
 *     approves its own executions;
 * <li>{@code admin} also changes what the organisation shares: servers, org connections, policies and OAuth apps, and
 *     manages every user's API tokens and reads the audit trail.
 * </ul>
 */
public enum Role {
    VIEWER, MEMBER, ADMIN;

    /** Made once: every audit event writes it twice (its log line and its row). */
    private final String wire = name().toLowerCase(Locale.ROOT);

    public String wire() {
        return wire;
    }

    public boolean atLeast(Role other) {
        return compareTo(other) >= 0;
    }

    public static Optional<Role> parse(String text) {
        return Arrays.stream(values()).filter(role -> role.wire().equals(text)).findFirst();
    }
}
