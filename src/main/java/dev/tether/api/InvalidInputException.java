package dev.tether.api;

/** A request that cannot be served as sent; the message names the offending field. */
final class InvalidInputException extends RuntimeException {

    private final String tag;

    InvalidInputException(String tag, String message) {
        super(message);
        this.tag = tag;
    }

    static InvalidInputException decode(String message) {
        return new InvalidInputException("HttpApiDecodeError", message);
    }

    static InvalidInputException connection(String message) {
        return new InvalidInputException("InvalidConnectionInputError", message);
    }

    String tag() {
        return tag;
    }
}
