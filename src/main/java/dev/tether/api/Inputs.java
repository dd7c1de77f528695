package dev.tether.api;

import java.util.Map;
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

    /** A map of strings whose keys and values are all present; null stays null. */
    static Map<String, String> stringMap(Map<String, String> values, String field) {
        if (values == null) {
            return null;
        }
        values.forEach((key, value) -> {
            if (key == null || key.isBlank() || value == null) {
                throw InvalidInputException.decode("`" + field + "` must map non-empty names to strings");
            }
        });
        return values;
    }

    static boolean flag(String value) {
        return value != null && (value.isEmpty() || value.equalsIgnoreCase("true") || value.equals("1"));
    }

    static Optional<String> optional(String value) {
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
    }
}
