package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tether.api.RawHttp.Answer;

/**
 * Who reaches Actuator: on the API's port only the token holder, but for {@code /actuator/health} (a probe needs no
 * secret); with {@code management.server.port} set, Actuator moves to that port, token-free, and is gone from the
 * API's port.
 */
@InProcess
class ActuatorAccessTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final List<String> GUARDED = List.of("/actuator", "/actuator/prometheus", "/actuator/metrics",
            "/actuator/metrics/jvm.memory.used", "/actuator/info", "/actuator/", "/actuator;x=1/prometheus",
            "/%61ctuator/prometheus", "/actuator/env", "/actuator/no-such-endpoint");

    @TempDir
    static Path root;

    @Test
    void onTheApiPortEveryActuatorEndpointButHealthNeedsTheToken() {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("same"), "--tether.api.token=t0ken")) {
            int port = Daemons.port(daemon);
            for (String path : GUARDED) {
                for (Map<String, String> headers : List.of(Map.<String, String>of(), Map.of("Authorization", "Bearer wrong"))) {
                    Answer answer = get(port, path, headers);
                    assertThat(answer.status()).as(path + " " + headers + ": " + answer).isEqualTo(401);
                    assertThat(answer.tag()).isEqualTo("UnauthorizedError");
                }
            }
            Answer scrape = get(port, "/actuator/prometheus", Map.of("Authorization", "Bearer t0ken"));
            assertThat(scrape.status()).as(scrape.toString()).isEqualTo(200);
            assertThat(scrape.body()).contains("jvm_memory_used_bytes");
            Answer info = get(port, "/actuator/info", Map.of("Authorization", "Bearer t0ken"));
            assertThat(info.status()).isEqualTo(200);
            assertThat(info.body()).contains("\"build\"").contains("\"java\"");

            Answer health = get(port, "/actuator/health", Map.of());
            assertThat(health.status()).as(health.toString()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"");
        }
    }

    /** As the Helm chart runs it: a management port with the liveness and readiness groups its probes use. */
    @Test
    void aManagementPortServesActuatorWithoutTheTokenAndTheApiPortNoLonger() throws SocketException {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("separate"), "--tether.api.token=t0ken",
                "--management.server.port=0", "--management.endpoint.health.probes.enabled=true")) {
            int api = Daemons.port(daemon);
            int management = Daemons.managementPort(daemon);
            assertThat(management).isNotEqualTo(api);

            Answer scrape = get(management, "/actuator/prometheus", Map.of());
            assertThat(scrape.status()).as(scrape.toString()).isEqualTo(200);
            assertThat(scrape.body()).contains("jvm_memory_used_bytes").contains("tether_sessions_live");
            assertThat(get(management, "/actuator/health", Map.of()).status()).isEqualTo(200);
            assertThat(get(management, "/actuator/metrics", Map.of()).status()).isEqualTo(200);
            for (String probe : List.of("/actuator/health/liveness", "/actuator/health/readiness")) {
                Answer answer = get(management, probe, Map.of());
                assertThat(answer.status()).as(probe + ", as the chart's probes ask: " + answer).isEqualTo(200);
            }

            for (String path : List.of("/actuator/prometheus", "/actuator/health", "/actuator/metrics")) {
                Answer moved = get(api, path, Map.of("Authorization", "Bearer t0ken"));
                assertThat(moved.status()).as(path + " on the API port: " + moved).isEqualTo(404);
            }
            assertThat(get(api, "/api/integrations", Map.of()).status()).as("the API still wants the token").isEqualTo(401);
            assertThat(get(api, "/api/health", Map.of()).status()).isEqualTo(200);

            assertThat(daemon.getEnvironment().getProperty("management.server.address"))
                    .as("the management port listens where the API does, not on every interface").isEqualTo("127.0.0.1");
            Optional<InetAddress> exposed = HostOriginTest.siteAddress();
            if (exposed.isPresent()) {
                assertThatThrownBy(() -> new Socket(exposed.get(), management).close())
                        .as("the management port is not reachable from the network").isInstanceOf(ConnectException.class);
            }

            Answer rebound = get(management, "/actuator/prometheus", Map.of("Host", "evil.example"));
            assertThat(rebound.status()).as("the management port checks Host and Origin too: " + rebound).isEqualTo(403);
            assertThat(get(management, "/actuator/health", Map.of("Origin", "http://evil.example")).status()).isEqualTo(403);
        }
    }

    /**
     * What Spring Boot Admin reads when it registers an instance (docs/operations.md): the endpoint index, health with
     * its details, and info with the build version, all from the management port with no token; with the two settings
     * the operator adds there.
     */
    @Test
    void springBootAdminFindsItsEndpointsHealthDetailsAndTheBuild() {
        try (ConfigurableApplicationContext daemon = Daemons.start(root.resolve("admin"), "--tether.api.token=t0ken",
                "--management.server.port=0",
                "--management.endpoints.web.exposure.include=health,info,metrics,prometheus,env,loggers,threaddump,configprops,mappings,beans,scheduledtasks",
                "--management.endpoint.health.show-details=always")) {
            int management = Daemons.managementPort(daemon);
            Answer index = get(management, "/actuator", Map.of("Accept", "application/vnd.spring-boot.actuator.v3+json"));
            assertThat(index.status()).as(index.toString()).isEqualTo(200);
            for (String endpoint : List.of("health", "info", "metrics", "env", "loggers", "threaddump", "prometheus")) {
                assertThat(index.body()).as(endpoint).contains("\"" + endpoint + "\":{\"href\"");
            }
            Answer health = get(management, "/actuator/health", Map.of("Accept", "application/vnd.spring-boot.actuator.v3+json"));
            assertThat(health.body()).contains("\"components\"").contains("\"diskSpace\"");
            Answer info = get(management, "/actuator/info", Map.of());
            assertThat(info.body()).contains("\"build\"").contains("\"version\":\"" + dev.tether.daemon.Version.TETHER);
        }
    }

    private static Answer get(int port, String path, Map<String, String> headers) {
        return RawHttp.send(LOOPBACK, port, "GET", path, headers);
    }
}
