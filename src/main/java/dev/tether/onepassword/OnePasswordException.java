package dev.tether.onepassword;

/** Executor's {@code OnePasswordError}: 1Password could not do what was asked (a 502 on the API). */
public final class OnePasswordException extends RuntimeException {

    private final String operation;

    public OnePasswordException(String operation, String message) {
        super(message);
        this.operation = operation;
    }

    /** What was being done, in Executor's words: {@code vault listing}, {@code config decode}, ... */
    public String operation() {
        return operation;
    }
}
