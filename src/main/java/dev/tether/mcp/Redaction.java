package dev.tether.mcp;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Takes out of a text every value Tether itself handed a server: the environment values of a stdio child, the
 * header and query values of a remote server. A child that prints its environment on stderr, or an HTTP error
 * that quotes the URL, must not carry those values into a health verdict, an API error or a log line.
 *
 * <p>Values shorter than {@value #SHORTEST} characters are left alone: replacing every {@code 1} or {@code on}
 * would make exit codes and messages unreadable, and a value that short protects nothing anyway.
 */
final class Redaction {

    static final String MASK = "***";
    static final int SHORTEST = 4;
    static final Redaction NONE = new Redaction(List.of());

    /** Longest first, so a value containing another is replaced whole. */
    private final List<String> values;

    private Redaction(List<String> values) {
        this.values = values;
    }

    /**
     * The values, as they are, as they look URL-encoded in a query string and escaped in a JSON string; and the
     * credential of a header value with a scheme ({@code Bearer <token>}, {@code Basic <base64>} and the password
     * inside it), since a server may quote the token alone.
     */
    static Redaction of(Collection<String> secrets) {
        Set<String> forms = new LinkedHashSet<>();
        for (String secret : secrets) {
            if (secret == null) {
                continue;
            }
            List<String> parts = new java.util.ArrayList<>(List.of(secret));
            int space = secret.indexOf(' ');
            if (space > 0) {
                String credential = secret.substring(space + 1).strip();
                parts.add(credential);
                basicPassword(secret.substring(0, space), credential).ifPresent(parts::add);
            }
            for (String part : parts) {
                if (part.length() >= SHORTEST) {
                    forms.add(part);
                    forms.add(URLEncoder.encode(part, StandardCharsets.UTF_8));
                    forms.add(URLEncoder.encode(part, StandardCharsets.UTF_8).replace("+", "%20"));
                    forms.add(part.replace("\\", "\\\\").replace("\"", "\\\"").replace("/", "\\/"));
                    forms.add(part.replace("\\", "\\\\").replace("\"", "\\\""));
                }
            }
        }
        return new Redaction(forms.stream().sorted(Comparator.comparingInt(String::length).reversed()).toList());
    }

    /** The password of a {@code Basic} credential (the whole decoded credential when it has no colon). */
    private static java.util.Optional<String> basicPassword(String scheme, String credential) {
        if (!scheme.equalsIgnoreCase("basic")) {
            return java.util.Optional.empty();
        }
        try {
            String decoded = new String(java.util.Base64.getDecoder().decode(credential), StandardCharsets.UTF_8);
            int colon = decoded.indexOf(':');
            return colon < 0 ? java.util.Optional.of(decoded) : java.util.Optional.of(decoded.substring(colon + 1));
        }
        catch (IllegalArgumentException notBase64) {
            return java.util.Optional.empty();
        }
    }

    static Redaction of(McpServer server) {
        if (server instanceof StdioServer stdio) {
            return of(stdio.env().values());
        }
        RemoteServer remote = (RemoteServer) server;
        List<String> secrets = new java.util.ArrayList<>(remote.headers().values());
        secrets.addAll(remote.queryParams().values());
        return of(secrets);
    }

    String apply(String text) {
        if (text == null || values.isEmpty()) {
            return text;
        }
        String scrubbed = text;
        for (String value : values) {
            scrubbed = scrubbed.replace(value, MASK);
        }
        return scrubbed;
    }

    boolean changes(@Nullable String text) {
        return text != null && values.stream().anyMatch(text::contains);
    }

    /**
     * A failure whose message, or any cause's, quotes one of the values, as a {@link McpServerException} that does
     * not (and keeps no cause that would); any other failure as it is.
     */
    Throwable apply(String server, Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (changes(e.getMessage()) || changes(e.toString())) {
                return McpServerException.redacted(server, String.valueOf(error.getMessage()), error, this);
            }
        }
        return error;
    }
}
