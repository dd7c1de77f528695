package dev.tether.api;

import dev.tether.mcp.RemoteServer;

/** A probe could not talk MCP to a remote endpoint. */
final class RemoteServerUnreachableException extends RuntimeException {

    RemoteServerUnreachableException(Throwable cause) {
        super("cannot talk MCP to the endpoint: " + cause.getMessage(), cause);
    }

    /** The server answered, but wants credentials first. */
    boolean requiresAuthentication() {
        return RemoteServer.wantsCredentials(getCause());
    }
}
