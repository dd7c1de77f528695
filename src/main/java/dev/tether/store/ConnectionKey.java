package dev.tether.store;

import java.util.Objects;

import dev.tether.identity.Principal;

/**
 * A connection's identity: {@code (owner, integration, name)} as callers name it, and the subject whose it is: {@code ""}
 * for the organisation's, the user's own for a personal one. Two users' {@code user/github/work} are two connections,
 * each with its own credentials, session and catalog; each names only its own by {@code user}.
 */
public record ConnectionKey(Owner owner, String integration, String name, String subject) {

    public ConnectionKey {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(integration, "integration");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(subject, "subject");
        if (owner == Owner.ORG != subject.isEmpty()) {
            throw new IllegalArgumentException(owner == Owner.ORG ? "an org connection belongs to no subject"
                    : "a user connection belongs to a subject");
        }
    }

    /** The organisation's connection. */
    public static ConnectionKey org(String integration, String name) {
        return new ConnectionKey(Owner.ORG, integration, name, "");
    }

    /** {@code subject}'s personal connection. */
    public static ConnectionKey user(String subject, String integration, String name) {
        return new ConnectionKey(Owner.USER, integration, name, subject);
    }

    /** The connection {@code caller} names {@code <owner>/<integration>/<name>}: the organisation's, or its own. */
    public static ConnectionKey of(Owner owner, String integration, String name, Principal caller) {
        return new ConnectionKey(owner, integration, name, owner.subjectFor(caller));
    }

    /** Executor's connection address: {@code tools.<integration>.<owner>.<name>}. */
    public String address() {
        return "tools." + integration + "." + owner.wire() + "." + name;
    }

    /** The address of one of its tools: {@code tools.<integration>.<owner>.<name>.<tool>}. */
    public String toolAddress(String tool) {
        return address() + "." + tool;
    }

    /**
     * {@code org/github/main}, {@code user/github/work} for the daemon's single user, {@code user:<subject>/github/work}
     * for another ({@link OwnerNames}): the text secrets are bound to, that replicas announce changes by, and that logs show.
     */
    @Override
    public String toString() {
        return OwnerNames.of(owner, subject) + "/" + integration + "/" + name;
    }
}
