package dev.tether.mcp;

/**
 * A remote server's authorization is over and only the user can renew it: the refresh token was refused
 * ({@code invalid_grant}), or there is none. Health shows such a connection as {@code expired}.
 */
public class AuthorizationExpiredException extends RuntimeException {

    public AuthorizationExpiredException(String message) {
        super(message);
    }
}
