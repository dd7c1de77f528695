package dev.tether.replicas;

import org.springframework.core.env.Environment;

/**
 * The {@code host:port} a replica writes in its lease, where peers forward requests for the connections it owns:
 * {@code tether.replicas.address} as given when it names a port, else that host with the port the API listens on.
 */
final class AdvertisedAddress {

    private static final String DEFAULT_PORT = "4788";

    private AdvertisedAddress() {
    }

    static String of(String configured, Environment environment) {
        if (hasPort(configured)) {
            return configured;
        }
        // local.server.port is the port bound (server.port=0 picks one); it exists once the server has started.
        String port = environment.getProperty("local.server.port", environment.getProperty("server.port", DEFAULT_PORT));
        return configured + ":" + port;
    }

    /** {@code host:port}, or {@code [v6]:port}; a bare IPv6 address has colons but no port. */
    static boolean hasPort(String address) {
        int colon = address.lastIndexOf(':');
        if (colon < 0 || colon == address.length() - 1) {
            return false;
        }
        boolean bareV6 = address.indexOf(':') != colon && !address.startsWith("[");
        return !bareV6 && address.substring(colon + 1).chars().allMatch(Character::isDigit)
                && !"0".equals(address.substring(colon + 1));
    }
}
