package dev.tether.oauth;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/**
 * Which URLs Tether sends OAuth requests to: {@code https:}, or {@code http:} on a loopback host (a local
 * authorization server), as Executor allows. Anything else would put codes, secrets and tokens on the wire in
 * the clear.
 */
final class Endpoints {

    private Endpoints() {
    }

    /** The URL, or an {@link IllegalArgumentException} that names the field and what is wrong with it. */
    static URI check(String url, String field) {
        URI uri = parse(url, field);
        String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
        if (scheme.equals("https") || scheme.equals("http") && loopback(uri.getHost())) {
            return uri;
        }
        throw new IllegalArgumentException("`" + field + "` must use https: or http: on a loopback host, was " + shown(uri));
    }

    static URI parse(String url, String field) {
        try {
            URI uri = new URI(url.strip());
            if (uri.getScheme() == null || uri.getHost() == null
                    || !(uri.getScheme().equalsIgnoreCase("http") || uri.getScheme().equalsIgnoreCase("https"))) {
                throw new IllegalArgumentException("`" + field + "` must be an absolute http(s) URL, was \"" + abbreviated(url) + "\"");
            }
            return uri;
        }
        catch (URISyntaxException ex) {
            throw new IllegalArgumentException("`" + field + "` is not a URL: " + ex.getReason());
        }
    }

    /** {@code scheme://host[:port]} */
    static String origin(URI uri) {
        return uri.getScheme() + "://" + uri.getRawAuthority();
    }

    /** The path without trailing slashes; empty for the root. */
    static String path(URI uri) {
        return Optional.ofNullable(uri.getRawPath()).orElse("").replaceAll("/+$", "");
    }

    private static boolean loopback(String host) {
        String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
        if (bare.equalsIgnoreCase("localhost")) {
            return true;
        }
        // Literal addresses only: a name is not resolved here.
        if (!bare.matches("[0-9.]+") && !bare.contains(":")) {
            return false;
        }
        try {
            return InetAddress.getByName(bare).isLoopbackAddress();
        }
        catch (java.net.UnknownHostException ex) {
            return false;
        }
    }

    private static String shown(URI uri) {
        return origin(uri) + path(uri);
    }

    private static String abbreviated(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "…";
    }
}
