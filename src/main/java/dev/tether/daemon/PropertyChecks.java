package dev.tether.daemon;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The checks every {@code @ConfigurationProperties} record makes of its settings: an unset one takes its
 * default, and a bad one stops the start with a message naming the property and the value given.
 */
public final class PropertyChecks {

    private PropertyChecks() {
    }

    public static Duration positive(String property, @Nullable Duration value, Duration fallback) {
        Duration setting = value == null ? fallback : value;
        if (setting.isNegative() || setting.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, was " + setting);
        }
        return setting;
    }

    public static Duration notNegative(String property, @Nullable Duration value, Duration fallback) {
        Duration setting = value == null ? fallback : value;
        if (setting.isNegative()) {
            throw new IllegalArgumentException(property + " must not be negative, was " + setting);
        }
        return setting;
    }

    public static int atLeastOne(String property, @Nullable Integer value, int fallback) {
        int setting = value == null ? fallback : value;
        if (setting < 1) {
            throw new IllegalArgumentException(property + " must be at least 1, was " + setting);
        }
        return setting;
    }
}
