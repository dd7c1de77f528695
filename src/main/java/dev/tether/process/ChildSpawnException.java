package dev.tether.process;

import org.jspecify.annotations.Nullable;

/** The operating system refused to start a child, e.g. because its command does not exist. */
public final class ChildSpawnException extends RuntimeException {

    private final String childId;

    ChildSpawnException(ChildSpec spec, Throwable cause) {
        super("cannot start `" + spec.argv().get(0) + "`: " + rootMessage(cause), cause);
        this.childId = spec.id();
    }

    public String childId() {
        return childId;
    }

    private static @Nullable String rootMessage(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage();
    }
}
