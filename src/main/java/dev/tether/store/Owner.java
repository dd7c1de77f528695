package dev.tether.store;

import java.util.Arrays;
import java.util.Optional;

/** Who a connection belongs to: the organisation or the user. */
public enum Owner {
    ORG, USER;

    public String wire() {
        return name().toLowerCase();
    }

    public static Optional<Owner> parse(String text) {
        return Arrays.stream(values()).filter(owner -> owner.wire().equals(text)).findFirst();
    }
}
