package dev.tether.store;

import java.util.Objects;

/** A connection's identity: {@code (owner, integration, name)}. */
public record ConnectionKey(Owner owner, String integration, String name) {

    public ConnectionKey {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(integration, "integration");
        Objects.requireNonNull(name, "name");
    }

    /** Executor's connection address: {@code tools.<integration>.<owner>.<name>}. */
    public String address() {
        return "tools." + integration + "." + owner.wire() + "." + name;
    }

    /** The address of one of its tools: {@code tools.<integration>.<owner>.<name>.<tool>}. */
    public String toolAddress(String tool) {
        return address() + "." + tool;
    }

    @Override
    public String toString() {
        return owner.wire() + "/" + integration + "/" + name;
    }
}
