package dev.tether.api;

/** A probe could not talk MCP to a remote endpoint. */
final class RemoteServerUnreachableException extends RuntimeException {

    RemoteServerUnreachableException(Throwable cause) {
        super("cannot talk MCP to the endpoint: " + cause.getMessage(), cause);
    }

    /** The server answered, but wants credentials first. */
    boolean requiresAuthentication() {
        String message = String.valueOf(getCause().getMessage());
        return message.contains("401") || message.contains("403") || getCause().getClass().getSimpleName().contains("Authorization");
    }
}
