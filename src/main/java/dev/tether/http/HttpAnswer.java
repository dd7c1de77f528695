package dev.tether.http;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

/**
 * An upstream's answer, read whole (and bounded).
 *
 * @param status  its status code
 * @param headers its headers, names in lower case, repeated ones joined with {@code ", "}
 * @param body    its body, empty when it had none
 */
public record HttpAnswer(int status, Map<String, String> headers, byte[] body) {

    public HttpAnswer {
        headers = Map.copyOf(headers);
    }

    public boolean ok() {
        return status >= 200 && status < 300;
    }

    public String text() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The media type without parameters, lower case; empty when none was given. */
    public String mediaType() {
        String type = headers.getOrDefault("content-type", "");
        int semicolon = type.indexOf(';');
        return (semicolon < 0 ? type : type.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
    }

    /** As Executor reads answers: JSON when the media type says so in any way. */
    public boolean json() {
        return mediaType().contains("json");
    }
}
