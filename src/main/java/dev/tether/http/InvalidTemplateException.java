package dev.tether.http;

/** An authentication template, or a connection's values for one, that cannot be used; the message says why. */
public final class InvalidTemplateException extends RuntimeException {

    /** Executor's code for the failure when a tool call meets it, such as {@code connection_value_missing}. */
    private final String code;

    public InvalidTemplateException(String code, String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
