package dev.tether.oauth;

/**
 * A token endpoint answered with an OAuth error (RFC 6749 §5.2), e.g. {@code invalid_grant} for a spent code or
 * a revoked refresh token. The description is the server's, which carries no secret of ours.
 */
final class TokenRefusedException extends RuntimeException {

    private final String error;

    TokenRefusedException(String error, String message) {
        super(message);
        this.error = error;
    }

    String error() {
        return error;
    }

    boolean invalidGrant() {
        return "invalid_grant".equals(error);
    }
}
