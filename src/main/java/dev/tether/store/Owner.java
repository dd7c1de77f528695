package dev.tether.store;

import java.util.Arrays;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principal;

/** Who a row belongs to: the organisation, or a user (its subject beside it in the row). */
public enum Owner {
    ORG, USER;

    public String wire() {
        return name().toLowerCase();
    }

    public static Optional<Owner> parse(@Nullable String text) {
        return Arrays.stream(values()).filter(owner -> owner.wire().equals(text)).findFirst();
    }

    /**
     * The subject of the row {@code caller} means by this owner: none for the organisation's, its own for a user's. The
     * daemon's own work has no user and names none.
     */
    public String subjectFor(Principal caller) {
        if (this == ORG) {
            return "";
        }
        if (caller.daemon()) {
            throw new NotPermittedException(caller, "name a personal row without a signed-in user");
        }
        return caller.subject();
    }
}
