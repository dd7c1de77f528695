package dev.tether.execution;

/** The JavaScript engine cannot run on this JVM; every execution ends with this reason. */
final class JsUnavailableException extends RuntimeException {

    JsUnavailableException(String message) {
        super(message);
    }
}
