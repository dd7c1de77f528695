package dev.tether.identity;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Who a request acts for. Rows of the store are the organisation's ({@code owner: "org"}, subject {@code ""}) or a
 * user's ({@code owner: "user"}, subject that user's); a principal sees the organisation's rows and its own subject's,
 * never another user's, and writes by its {@link Role}. The daemon's own work ({@link #DAEMON}) sees every row and
 * owns none.
 *
 * @param tenant     the organisation the deployment serves (one per deployment: {@code tether.identity.tenant})
 * @param subject    the user: the OIDC {@code sub}, an API token's owner, or {@value #LOCAL_SUBJECT} for the single
 *                   user of the daemon's token; empty for the daemon itself
 * @param role       what it may do
 * @param via        how it proved itself
 * @param credential which credential it presented, for the audit trail: an API token's id ({@code tok_…}), a JWT's
 *                   client ({@code azp}); never a secret; null when there is nothing to name
 * @param name       a name to show (the provider's {@code preferred_username}, an API token's name); null when none
 */
public record Principal(String tenant, String subject, Role role, Via via, @Nullable String credential, @Nullable String name) {

    /** The subject of the daemon's single user, as Executor's npm daemon names it. */
    public static final String LOCAL_SUBJECT = "local";

    /** The tenant when none is configured. */
    public static final String DEFAULT_TENANT = "default";

    /** The daemon's own work: sees every row, owns none. Also what code outside any request runs as. */
    public static final Principal DAEMON = new Principal(DEFAULT_TENANT, "", Role.ADMIN, Via.DAEMON, null, null);

    public Principal {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(via, "via");
        if (subject.isEmpty() && via != Via.DAEMON) {
            throw new IllegalArgumentException("only the daemon's own work has no subject");
        }
    }

    /** The single user of the daemon's token, its password, or no authentication at all: an admin. */
    public static Principal local(String tenant, Via via) {
        return new Principal(tenant, LOCAL_SUBJECT, Role.ADMIN, via, null, null);
    }

    /** The daemon's own work, for no user: it sees every row. (The daemon working for a user has that user's subject.) */
    public boolean daemon() {
        return subject.isEmpty();
    }

    /** The daemon working on a row of {@code subject}'s, a member's rights on that user's rows: a sync a peer runs for it. */
    public static Principal daemonFor(String tenant, String subject) {
        return subject.isEmpty() ? DAEMON : new Principal(tenant, subject, Role.MEMBER, Via.DAEMON, null, null);
    }

    /**
     * Whether this principal sees a row whose subject is {@code rowSubject} ({@code ""} for the organisation's): the
     * organisation's rows and its own, or every row for the daemon.
     */
    public boolean sees(String rowSubject) {
        return daemon() || rowSubject.isEmpty() || rowSubject.equals(subject);
    }

    /**
     * Whether it may create, change or remove a row it {@link #sees}: the organisation's as an admin, its own as a
     * member or admin; a viewer none.
     */
    public boolean mayWrite(String rowSubject) {
        if (daemon()) {
            return true;
        }
        return rowSubject.isEmpty() ? role == Role.ADMIN : rowSubject.equals(subject) && role.atLeast(Role.MEMBER);
    }

    /** Whether it may use connections (call tools, run code, check and refresh): a member or admin. */
    public boolean mayUse() {
        return role.atLeast(Role.MEMBER);
    }

    /** The same principal with another role: a token scoped below its owner's role. */
    public Principal withRole(Role lower) {
        return new Principal(tenant, subject, lower, via, credential, name);
    }

    /** Who, for a log line or a message: the subject (a provider's id, never a secret), or {@code daemon}. */
    public String shown() {
        return daemon() ? "daemon" : subject;
    }
}
