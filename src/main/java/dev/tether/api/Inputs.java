package dev.tether.api;

import java.util.Optional;

import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/** Checks of request values that name the field at fault. */
final class Inputs {

    private Inputs() {
    }

    static String requireText(String value, String field) {
        if (value == null || value.isBlank()) {
            throw InvalidInputException.decode("`" + field + "` is required and must be a non-empty string");
        }
        return value;
    }

    static Owner owner(String value, String field) {
        return Owner.parse(requireText(value, field)).orElseThrow(() -> InvalidInputException.decode(
                "`" + field + "` must be \"org\" or \"user\", was \"" + value + "\""));
    }

    static Optional<Owner> optionalOwner(String value) {
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(owner(value, "owner"));
    }

    static ConnectionKey connectionKey(String owner, String integration, String name) {
        return new ConnectionKey(owner(owner, "owner"), requireText(integration, "integration"), requireText(name, "name"));
    }

    static Optional<String> optional(String value) {
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
    }
}
