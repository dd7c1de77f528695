package dev.tether.store;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A connection's name as Executor 1.5.9 stores it (its {@code connectionIdentifier}): the words of what the client
 * sent, lower-cased and joined in camel case, so that the name is a JavaScript identifier in a tool's address
 * ({@code "Work Account"} and {@code "work-account"} are both {@code workAccount}); a name that would start with a
 * digit gets {@code connection} before it, and one with no word at all is {@code connection}.
 */
public final class ConnectionNames {

    private static final Pattern WORD = Pattern.compile("[a-z0-9]+");
    private static final String FALLBACK = "connection";

    private ConnectionNames() {
    }

    public static String identifier(String given) {
        Matcher words = WORD.matcher(given.toLowerCase(Locale.ROOT));
        StringBuilder name = new StringBuilder();
        while (words.find()) {
            String word = words.group();
            name.append(name.isEmpty() ? word : Character.toUpperCase(word.charAt(0)) + word.substring(1));
        }
        if (name.isEmpty()) {
            return FALLBACK;
        }
        return Character.isDigit(name.charAt(0)) ? FALLBACK + Character.toUpperCase(name.charAt(0)) + name.substring(1)
                : name.toString();
    }
}
