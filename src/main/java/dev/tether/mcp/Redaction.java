package dev.tether.mcp;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

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

    /** The values, as they are and as they look URL-encoded in a query string. */
    static Redaction of(Collection<String> secrets) {
        Set<String> forms = new LinkedHashSet<>();
        for (String secret : secrets) {
            if (secret != null && secret.length() >= SHORTEST) {
                forms.add(secret);
                forms.add(URLEncoder.encode(secret, StandardCharsets.UTF_8));
                forms.add(URLEncoder.encode(secret, StandardCharsets.UTF_8).replace("+", "%20"));
            }
        }
        return new Redaction(forms.stream().sorted(Comparator.comparingInt(String::length).reversed()).toList());
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

    boolean changes(String text) {
        return text != null && values.stream().anyMatch(text::contains);
    }
}
