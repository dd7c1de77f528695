package dev.tether.api.input;

import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.lang.Contract;

import dev.tether.identity.Principal;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/** Checks of request values that name the field at fault. */
public final class Inputs {

    private Inputs() {
    }

    public static String requireText(@Nullable String value, String field) {
        if (value == null || value.isBlank()) {
            throw InvalidInputException.decode("`" + field + "` is required and must be a non-empty string");
        }
        return value;
    }

    public static Owner owner(@Nullable String value, String field) {
        return Owner.parse(requireText(value, field)).orElseThrow(() -> InvalidInputException.decode(
                "`" + field + "` must be \"org\" or \"user\", was \"" + value + "\""));
    }

    public static Optional<Owner> optionalOwner(@Nullable String value) {
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(owner(value, "owner"));
    }

    /** The connection {@code caller} names so: the organisation's, or for {@code user} its own. */
    public static ConnectionKey connectionKey(@Nullable String owner, @Nullable String integration, @Nullable String name,
            Principal caller) {
        Bounds.check("owner", owner);
        Bounds.check("integration", integration);
        Bounds.check("name", name);
        return ConnectionKey.of(owner(owner, "owner"), requireText(integration, "integration"), requireText(name, "name"), caller);
    }

    /** A map of strings whose keys and values are all present; null stays null. */
    @Contract("!null, _ -> !null")
    public static @Nullable Map<String, String> stringMap(@Nullable Map<String, String> values, String field) {
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

    /**
     * Environment variables: a name holding {@code =} or NUL, or a value holding NUL, cannot be passed to a child at
     * all; refused here rather than failing at spawn, after it was stored.
     */
    @Contract("!null, _ -> !null")
    public static @Nullable Map<String, String> envMap(@Nullable Map<String, String> values, String field) {
        stringMap(values, field);
        if (values != null) {
            values.forEach((name, value) -> {
                if (name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
                    throw InvalidInputException.decode("`" + field + "` names must not contain '=' or NUL");
                }
                if (value.indexOf('\0') >= 0) {
                    throw InvalidInputException.decode("`" + field + "." + name + "` must not contain NUL");
                }
            });
        }
        return values;
    }

    /** Request headers: names are HTTP tokens, values hold no line breaks or NUL (no header injection). */
    @Contract("!null, _ -> !null")
    public static @Nullable Map<String, String> headerMap(@Nullable Map<String, String> values, String field) {
        stringMap(values, field);
        if (values != null) {
            values.forEach((name, value) -> {
                if (!name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
                    throw InvalidInputException.decode("`" + field + "` names must be HTTP header names, was \"" + name + "\"");
                }
                if (value.chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
                    throw InvalidInputException.decode("`" + field + "." + name + "` must not contain line breaks or NUL");
                }
            });
        }
        return values;
    }

    public static boolean flag(@Nullable String value) {
        return value != null && (value.isEmpty() || value.equalsIgnoreCase("true") || value.equals("1"));
    }

    public static Optional<String> optional(@Nullable String value) {
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
    }
}
