package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tether.api.RawHttp.Answer;
import dev.tether.testsupport.Prerequisites;

/**
 * DNS rebinding and foreign web pages, tried with forged {@code Host} and {@code Origin} headers over real sockets: a
 * page that rebinds its name to 127.0.0.1 sends its own name as {@code Host}; a page calling from its origin sends
 * that {@code Origin}. Both are refused with 403 on every route, token-free ones and the agent endpoints included,
 * before the token is looked at.
 */
@InProcess
class HostOriginTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    /** Token-free routes a page would read, guarded routes, the agent endpoints and Actuator. */
    private static final List<String[]> ROUTES = List.of(new String[] { "GET", "/api/health" },
            new String[] { "GET", "/api/docs" }, new String[] { "GET", "/actuator/health" },
            new String[] { "GET", "/actuator/prometheus" }, new String[] { "GET", "/actuator/metrics" },
            new String[] { "GET", "/api/integrations" }, new String[] { "POST", "/mcp" }, new String[] { "GET", "/mcp" },
            new String[] { "GET", "/sse" }, new String[] { "POST", "/messages" }, new String[] { "GET", "/no/such/route" });

    @TempDir
    static Path root;

    @Test
    void aForeignHostIsRefusedOnEveryRouteEvenWithTheToken() {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("hosts"), "--tether.api.token=t0ken")) {
            int port = Daemons.port(daemon);
            List<String> foreign = List.of("evil.example", "evil.example:" + port, "localhost.evil.example",
                    "127.0.0.1.nip.io", "attacker.localhost.example:80", "192.168.1.10:" + port, "10.0.0.1", "[::2]",
                    "[::ffff:7f00:1]", "127.0.0.256", "LOCALHOST@evil.example");
            for (String host : foreign) {
                for (String[] route : ROUTES) {
                    Answer answer = send(port, route, Map.of("Host", host, "Authorization", "Bearer t0ken"));
                    String what = route[0] + " " + route[1] + " with Host " + host;
                    assertThat(answer.status()).as(what + ": " + answer).isEqualTo(403);
                    assertThat(answer.tag()).as(what).isEqualTo("HostNotAllowedError");
                    assertThat(answer.body()).as(what).contains("tether.api.allowed-hosts");
                }
            }
            for (String malformed : List.of("localhost:http", "localhost:" + port + ":1", "")) {
                Answer answer = send(port, new String[] { "GET", "/api/health" }, Map.of("Host", malformed));
                assertThat(answer.status()).as("Host '" + malformed + "': " + answer).isIn(400, 403);
            }
        }
    }

    @Test
    void loopbackNamesAndAddressesWithAnyPortPass() {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("loopback"))) {
            int port = Daemons.port(daemon);
            for (String host : List.of("localhost", "localhost:" + port, "LocalHost:" + port, "127.0.0.1",
                    "127.0.0.1:" + port, "127.1.2.3:80", "127.255.255.255", "[::1]", "[::1]:" + port)) {
                Answer answer = send(port, new String[] { "GET", "/api/health" }, Map.of("Host", host));
                assertThat(answer.status()).as("Host " + host + ": " + answer).isEqualTo(200);
            }
            Answer docs = send(port, new String[] { "GET", "/api/docs" }, Map.of("Host", "localhost"));
            assertThat(docs.status()).as(docs.toString()).isEqualTo(200);
        }
    }

    @Test
    void aForeignOriginIsRefusedOnEveryRouteAndLoopbackOriginsOrNoneAreNot() {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("origins"), "--tether.api.token=t0ken")) {
            int port = Daemons.port(daemon);
            List<String> foreign = List.of("http://evil.example", "https://evil.example:" + port, "null",
                    "http://localhost.evil.example", "http://127.0.0.1.nip.io:" + port, "file://", "chrome-extension://abc",
                    "http://localhost/path", "http://user@localhost", "not an origin", "");
            for (String origin : foreign) {
                for (String[] route : ROUTES) {
                    Answer answer = send(port, route, Map.of("Origin", origin, "Authorization", "Bearer t0ken"));
                    String what = route[0] + " " + route[1] + " with Origin '" + origin + "'";
                    assertThat(answer.status()).as(what + ": " + answer).isEqualTo(403);
                    assertThat(answer.tag()).as(what).isEqualTo("OriginNotAllowedError");
                    assertThat(answer.body()).as(what).contains("tether.api.allowed-origins");
                }
            }
            for (String origin : List.of("http://localhost:6274", "http://127.0.0.1", "https://127.0.0.1:" + port,
                    "http://[::1]:3000", "HTTP://LOCALHOST")) {
                Answer answer = send(port, new String[] { "GET", "/api/integrations" },
                        Map.of("Origin", origin, "Authorization", "Bearer t0ken"));
                assertThat(answer.status()).as("Origin " + origin + ": " + answer).isEqualTo(200);
            }
            Answer none = send(port, new String[] { "GET", "/api/integrations" }, Map.of("Authorization", "Bearer t0ken"));
            assertThat(none.status()).as("no Origin, as the CLI sends: " + none).isEqualTo(200);
            Answer tokenless = send(port, new String[] { "GET", "/api/integrations" }, Map.of("Origin", "http://localhost:1"));
            assertThat(tokenless.status()).as("a loopback origin still needs the token").isEqualTo(401);
        }
    }

    @Test
    void theOperatorListsTheNamesAProxyUsesAndTheOriginsItServes() {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("allowed"),
                "--tether.api.allowed-hosts=tether.internal,Tether.Example.COM",
                "--tether.api.allowed-origins=https://app.example.com,http://dash.example.com:3000/")) {
            int port = Daemons.port(daemon);
            for (String host : List.of("tether.internal", "tether.internal:443", "tether.example.com:" + port, "localhost")) {
                assertThat(send(port, new String[] { "GET", "/api/health" }, Map.of("Host", host)).status())
                        .as("Host " + host).isEqualTo(200);
            }
            assertThat(send(port, new String[] { "GET", "/api/health" }, Map.of("Host", "other.internal")).status())
                    .isEqualTo(403);
            for (String origin : List.of("https://app.example.com", "http://dash.example.com:3000", "http://localhost:8080")) {
                assertThat(send(port, new String[] { "GET", "/api/health" }, Map.of("Origin", origin)).status())
                        .as("Origin " + origin).isEqualTo(200);
            }
            for (String origin : List.of("http://app.example.com", "https://app.example.com:8443", "https://other.example.com",
                    "http://dash.example.com")) {
                assertThat(send(port, new String[] { "GET", "/api/health" }, Map.of("Origin", origin)).status())
                        .as("Origin " + origin).isEqualTo(403);
            }
        }
    }

    /**
     * Bound to every interface, a connection over loopback is still where a rebound name lands, so its {@code Host} is
     * checked; one to an address the operator exposed carries names the daemon cannot know, and the token guards there.
     * A foreign {@code Origin} is refused on both.
     */
    @Test
    void onEveryInterfaceTheHostIsCheckedOverLoopbackOnly() throws SocketException {
        Optional<InetAddress> exposed = siteAddress();
        Prerequisites.require(exposed.isPresent(), "this machine has no non-loopback IPv4 address",
                "any networked machine has one; .ci/run runs on one");
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("exposed"), "--server.address=0.0.0.0")) {
            int port = Daemons.port(daemon);
            String[] health = { "GET", "/api/health" };
            assertThat(RawHttp.send(LOOPBACK, port, "GET", "/api/health", Map.of("Host", "evil.example")).status())
                    .isEqualTo(403);
            assertThat(RawHttp.send(exposed.get(), port, "GET", "/api/health", Map.of("Host", "tether.example.com")).status())
                    .isEqualTo(200);
            Answer origin = RawHttp.send(exposed.get(), port, health[0], health[1], Map.of("Origin", "http://evil.example"));
            assertThat(origin.status()).isEqualTo(403);
            assertThat(origin.tag()).isEqualTo("OriginNotAllowedError");
        }
    }

    @Test
    void aMalformedAllowedOriginStopsTheStartNamingTheSetting() {
        assertThatThrownBy(() -> Daemons.start(root.resolve("bad"), "--tether.api.allowed-origins=app.example.com").close())
                .rootCause().hasMessageContaining("tether.api.allowed-origins").hasMessageContaining("app.example.com");
        assertThatThrownBy(() -> Daemons.start(root.resolve("bad"), "--tether.api.allowed-hosts=https://x.example").close())
                .rootCause().hasMessageContaining("tether.api.allowed-hosts");
    }

    private static Answer send(int port, String[] route, Map<String, String> headers) {
        return RawHttp.send(LOOPBACK, port, route[0], route[1], headers);
    }

    /** A non-loopback IPv4 address of this machine, to connect to as a client on the network would. */
    static Optional<InetAddress> siteAddress() throws SocketException {
        return NetworkInterface.networkInterfaces().filter(face -> {
            try {
                return face.isUp() && !face.isLoopback();
            }
            catch (SocketException ex) {
                return false;
            }
        }).flatMap(NetworkInterface::inetAddresses).filter(Inet4Address.class::isInstance)
                .filter(address -> !address.isLoopbackAddress() && !address.isLinkLocalAddress()).findFirst();
    }
}
