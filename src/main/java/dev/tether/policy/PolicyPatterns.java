package dev.tether.policy;

import org.jspecify.annotations.Nullable;

/**
 * Executor's policy pattern grammar over tool paths {@code <integration>.<owner>.<connection>.<tool>}: {@code *}
 * alone matches everything, a trailing {@code *} segment a whole subtree, any other {@code *} segment exactly
 * one segment; partial wildcards ({@code me*}) are invalid.
 */
final class PolicyPatterns {

    private PolicyPatterns() {
    }

    static boolean matches(String pattern, String path) {
        if (pattern.equals("*")) {
            return true;
        }
        String[] segments = pattern.split("\\.", -1);
        String[] parts = path.split("\\.", -1);
        for (int i = 0; i < segments.length; i++) {
            if (segments[i].equals("*")) {
                if (i == segments.length - 1) {
                    return parts.length >= i;
                }
                if (i >= parts.length) {
                    return false;
                }
                continue;
            }
            if (i >= parts.length || !parts[i].equals(segments[i])) {
                return false;
            }
        }
        return segments.length == parts.length;
    }

    /** Why the pattern is invalid, or null when it is valid. */
    static @Nullable String problem(String pattern) {
        if (pattern == null || pattern.isEmpty()) {
            return "`pattern` must not be empty";
        }
        if (pattern.equals("*")) {
            return null;
        }
        if (pattern.startsWith("*")) {
            return "`pattern` may start with `*` only when it is `*` alone, was '" + pattern + "'";
        }
        for (String segment : pattern.split("\\.", -1)) {
            if (segment.isEmpty()) {
                return "`pattern` has an empty segment: '" + pattern + "'";
            }
            if (segment.contains("*") && !segment.equals("*")) {
                return "`pattern` may use `*` only as a whole segment, was '" + pattern + "'";
            }
        }
        return null;
    }
}
