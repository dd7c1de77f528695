package dev.tether.mcp;

/**
 * A remote server refused a request for want of scope ({@code 403} with {@code Bearer error="insufficient_scope"},
 * RFC 6750 §3.1): renewing the token cannot help, since a refresh never widens a grant. Only a new authorization by
 * the user can, which asks for the scopes the token had and the ones the server named ({@link BearerToken#needsScope}).
 * Other requests go on with the token as it is.
 */
public final class InsufficientScopeException extends AuthorizationExpiredException {

    InsufficientScopeException(String server, String challenged, String asked) {
        super("MCP server '" + server + "' refused the request for want of scope" + (challenged.isEmpty() ? "" : " " + challenged)
                + " (insufficient_scope): authorize the connection again, and Tether asks for scope \"" + asked + "\"");
    }
}
