package dev.tether.users;

/** A request to the users' routes that cannot be served as sent; the message names the field at fault, never a secret. */
public final class InvalidRequestException extends RuntimeException {

    InvalidRequestException(String message) {
        super(message);
    }

    /** Checks a value's length, as the API's other inputs are checked: the message quotes the limit and the length. */
    static void bounded(String field, @org.jspecify.annotations.Nullable String value, int limit) {
        if (value != null && value.length() > limit) {
            throw new InvalidRequestException("`" + field + "` may be at most " + limit + " characters long, was " + value.length());
        }
    }
}
