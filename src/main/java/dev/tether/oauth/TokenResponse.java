package dev.tether.oauth;

import java.util.Optional;

/**
 * A successful answer of a token endpoint (RFC 6749 §5.1). Secrets: never logged, never returned.
 *
 * @param accessToken  the bearer token
 * @param refreshToken when given, what renews it
 * @param expiresIn    its lifetime in seconds, when given
 * @param scope        the scope granted, when the server names it
 */
record TokenResponse(String accessToken, Optional<String> refreshToken, Optional<Long> expiresIn, Optional<String> scope) {

    @Override
    public String toString() {
        return "TokenResponse[access=***, refresh=" + (refreshToken.isPresent() ? "***" : "none") + ", expiresIn=" + expiresIn
                + ", scope=" + scope + "]";
    }
}
