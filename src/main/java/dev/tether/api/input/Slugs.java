package dev.tether.api.input;

import java.util.regex.Pattern;

/** Executor's slug rules. */
public final class Slugs {

    private static final Pattern VALID = Pattern.compile("[a-z0-9_-]+");

    private Slugs() {
    }

    /** Lowercase, every run of characters other than letters and digits becomes one {@code _}. */
    public static String fromName(String name) {
        String slug = name.toLowerCase().replaceAll("[^a-z0-9]+", "_");
        if (slug.replace("_", "").isEmpty()) {
            throw InvalidInputException.decode("`name` \"" + name + "\" has no letters or digits to make a slug from; give a `slug`");
        }
        return slug;
    }

    /** A slug for a name the server chose, never failing: falls back to {@code mcp}. */
    public static String fromText(String text) {
        String slug = text.toLowerCase().replaceAll("[^a-z0-9]+", "_");
        return slug.replace("_", "").isEmpty() ? "mcp" : slug;
    }

    public static String check(String slug) {
        if (!VALID.matcher(slug).matches()) {
            throw InvalidInputException.decode("`slug` \"" + slug + "\" may only hold lowercase letters, digits, '_' and '-'");
        }
        return slug;
    }
}
