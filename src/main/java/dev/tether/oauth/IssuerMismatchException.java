package dev.tether.oauth;

/**
 * An issuer is not the one it must be: authorization-server metadata that names another issuer than the one it was
 * fetched for (RFC 8414 §3.3), or an authorization response whose {@code iss} is not the issuer the request went to,
 * or that lacks the {@code iss} its server promised (RFC 9207). Either is what a mix-up attack looks like, so it is
 * refused. The message names both issuers and the rule: issuers are public, and nothing secret goes with them.
 */
final class IssuerMismatchException extends RuntimeException {

    IssuerMismatchException(String message) {
        super(message);
    }

    /** RFC 8414 §3.3: an issuer given with a trailing slash also matches the same issuer without it, as the MCP SDKs allow. */
    static void checkMetadata(String expected, java.util.Optional<String> named, java.net.URI fetchedFrom) {
        if (named.isEmpty()) {
            throw new IssuerMismatchException("the authorization server metadata at " + fetchedFrom + " names no issuer; "
                    + "RFC 8414 requires it to name " + expected);
        }
        String issuer = named.get();
        if (!issuer.equals(expected) && !(expected.endsWith("/") && issuer.equals(expected.substring(0, expected.length() - 1)))) {
            throw new IssuerMismatchException("the authorization server metadata at " + fetchedFrom + " names issuer " + issuer
                    + ", not " + expected + " that it was fetched for (RFC 8414 §3.3): refused");
        }
    }
}
