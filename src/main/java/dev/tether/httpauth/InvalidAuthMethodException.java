package dev.tether.httpauth;

/** An auth method that is not one of Executor's shapes; the message names the field at fault. */
public final class InvalidAuthMethodException extends RuntimeException {

    public InvalidAuthMethodException(String message) {
        super(message);
    }
}
