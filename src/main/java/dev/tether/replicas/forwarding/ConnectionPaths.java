package dev.tether.replicas.forwarding;

import java.nio.charset.StandardCharsets;

import org.springframework.web.util.UriUtils;

import dev.tether.store.ConnectionKey;

/** The path of one of a connection's actions, {@code /api/connections/{owner}/{integration}/{name}/{action}}, encoded. */
final class ConnectionPaths {

    private ConnectionPaths() {
    }

    static String of(ConnectionKey connection, String action) {
        return "/api/connections/" + segment(connection.owner().wire()) + "/" + segment(connection.integration()) + "/"
                + segment(connection.name()) + "/" + action;
    }

    private static String segment(String value) {
        return UriUtils.encodePathSegment(value, StandardCharsets.UTF_8);
    }
}
