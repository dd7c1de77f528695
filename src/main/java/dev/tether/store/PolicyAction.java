package dev.tether.store;

import java.util.Arrays;
import java.util.Optional;

/** What a policy does with a matching tool call, from least to most restrictive. */
public enum PolicyAction {
    APPROVE, REQUIRE_APPROVAL, BLOCK;

    public String wire() {
        return name().toLowerCase();
    }

    public static Optional<PolicyAction> parse(String text) {
        return Arrays.stream(values()).filter(action -> action.wire().equals(text)).findFirst();
    }
}
