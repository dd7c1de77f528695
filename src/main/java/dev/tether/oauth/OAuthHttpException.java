package dev.tether.oauth;

import java.net.URI;

/** A request to an authorization server or metadata endpoint failed; the message names the URL and why. */
final class OAuthHttpException extends RuntimeException {

    OAuthHttpException(URI uri, String reason) {
        super(withoutQuery(uri) + " " + reason);
    }

    /** A query may carry a code or a token: the message shows the URL without it. */
    private static String withoutQuery(URI uri) {
        return uri.getScheme() + "://" + uri.getRawAuthority() + (uri.getRawPath() == null ? "" : uri.getRawPath());
    }
}
