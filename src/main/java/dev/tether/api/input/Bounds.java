package dev.tether.api.input;

import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.lang.Contract;

/**
 * The length bounds of every string a request carries, checked before anything is stored or started: an over-long
 * value is a 400 naming the field, never a database error. Names and identifiers match the store's
 * {@code VARCHAR(200)} columns; free text, commands and secret values get more room, but not unlimited.
 */
public final class Bounds {

    public static final int NAME = 200;
    public static final int TEXT = 10_000;
    public static final int PATH = 4_096;
    public static final int SECRET = 65_536;
    public static final int ENTRIES = 1_000;

    private static final Map<String, Integer> LONGER = Map.ofEntries(
            Map.entry("description", TEXT),
            Map.entry("command", PATH), Map.entry("args", PATH), Map.entry("cwd", PATH), Map.entry("endpoint", PATH),
            Map.entry("address", 1_024), Map.entry("query", 1_024), Map.entry("pattern", 1_024), Map.entry("policyId", 64),
            Map.entry("value", SECRET), Map.entry("values", SECRET), Map.entry("env", SECRET), Map.entry("headers", SECRET),
            Map.entry("queryParams", PATH), Map.entry("from", PATH),
            Map.entry("url", PATH), Map.entry("authorizationUrl", PATH), Map.entry("tokenUrl", PATH),
            Map.entry("registrationEndpoint", PATH), Map.entry("resource", PATH), Map.entry("redirectUri", PATH),
            Map.entry("clientId", PATH), Map.entry("clientSecret", SECRET), Map.entry("code", PATH), Map.entry("state", PATH),
            Map.entry("scopes", 1_024), Map.entry("tokenEndpointAuthMethodsSupported", 1_024),
            Map.entry("error_description", TEXT));

    private Bounds() {
    }

    /** The longest a value of {@code field} may be. */
    public static int of(String field) {
        return LONGER.getOrDefault(field, NAME);
    }

    /** Checks a path variable or query parameter. */
    @Contract("_, !null -> !null")
    public static @Nullable String check(String field, @Nullable String value) {
        if (value != null && value.length() > of(field)) {
            throw tooLong(field, of(field), value.length());
        }
        return value;
    }

    /**
     * Checks every string of a request body: its record components, the strings of their lists, the keys (bounded
     * as names) and values of their maps, and nested records; {@code args} of tool calls are the tool's business.
     */
    public static <T> T check(T request) {
        if (request != null) {
            walk(request, "");
        }
        return request;
    }

    private static void walk(Object record, String prefix) {
        for (RecordComponent component : record.getClass().getRecordComponents()) {
            Object value;
            try {
                value = component.getAccessor().invoke(record);
            }
            catch (ReflectiveOperationException ex) {
                throw new IllegalStateException("cannot read " + component, ex);
            }
            String name = component.getName();
            String field = prefix + name;
            if (value instanceof String text) {
                checkString(field, of(name), text);
            }
            else if (value instanceof Collection<?> items) {
                checkCount(field, items.size());
                int index = 0;
                for (Object item : items) {
                    if (item instanceof String text) {
                        checkString(field + "[" + index + "]", of(name), text);
                    }
                    index++;
                }
            }
            else if (value instanceof Map<?, ?> entries && !name.equals("args")) {
                checkCount(field, entries.size());
                entries.forEach((key, item) -> {
                    if (key instanceof String text) {
                        checkString(field + " name", NAME, text);
                    }
                    if (item instanceof String text) {
                        checkString(field + "." + key, of(name), text);
                    }
                });
            }
            else if (value != null && value.getClass().isRecord()) {
                walk(value, field + ".");
            }
        }
    }

    private static void checkString(String field, int limit, String value) {
        if (value.length() > limit) {
            throw tooLong(field, limit, value.length());
        }
    }

    private static void checkCount(String field, int count) {
        if (count > ENTRIES) {
            throw InvalidInputException.decode("`" + field + "` may have at most " + ENTRIES + " entries, has " + count);
        }
    }

    private static InvalidInputException tooLong(String field, int limit, int length) {
        // The value itself is not quoted: it may be a secret, and it is too long to read anyway.
        String shown = field.length() > NAME ? field.substring(0, NAME) + "…" : field;
        return InvalidInputException.decode("`" + shown + "` may be at most " + limit + " characters, was " + length);
    }
}
