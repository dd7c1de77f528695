package dev.tether.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Fixture;

/**
 * The Helm chart, rendered by Helm itself (its Go library, from Maven Central) with default and non-default values:
 * lint passes strictly, every manifest is well-formed as Kubernetes reads it (the checks {@code kubectl}'s schema
 * validation would fail on: names, string env values, integer ports, probe and service ports naming a container
 * port), and the features are wired (management port and probes, allowed hosts and origins, dashboard ConfigMap).
 */
class ChartTest {

    private static final Path CHART = Fixture.projectRoot().resolve("helm/tether");
    private static final String DNS_1123 = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

    @Test
    void lintPassesStrictly() {
        LintResult lint = new Helm(CHART).lint().strict().call();
        assertThat(lint.isFailed()).as(String.join("\n", lint.getMessages())).isFalse();
    }

    @Test
    void defaultsServeActuatorOnTheManagementPortAndShipTheDashboard() throws IOException {
        List<Map<String, Object>> manifests = render(template());
        assertThat(kinds(manifests)).containsExactlyInAnyOrder("Deployment", "Service", "PersistentVolumeClaim", "ConfigMap");
        assertThat(at(one(manifests, "Deployment"), "spec")).containsEntry("replicas", 1);
        assertThat(at(one(manifests, "Deployment"), "spec", "strategy")).containsEntry("type", "Recreate");

        Map<String, Object> container = container(manifests);
        Map<String, String> env = env(container);
        assertThat(env).containsEntry("MANAGEMENT_SERVER_PORT", "9090").containsEntry("MANAGEMENT_SERVER_ADDRESS", "0.0.0.0")
                .containsEntry("MANAGEMENT_ENDPOINT_HEALTH_PROBES_ENABLED", "true");
        assertThat(env.get("TETHER_API_ALLOWED_HOSTS").split(",")).contains("tether-tether", "tether-tether.ops",
                "tether-tether.ops.svc", "tether-tether.ops.svc.cluster.local");
        assertThat(env).doesNotContainKey("TETHER_API_ALLOWED_ORIGINS").doesNotContainKey("TETHER_SERVER_TRUSTED_PROXIES")
                .doesNotContainKey("TETHER_SERVER_MAX_CONNECTIONS").doesNotContainKey("MANAGEMENT_TRACING_EXPORT_ZIPKIN_ENABLED")
                .doesNotContainKey("MANAGEMENT_TRACING_EXPORT_ZIPKIN_ENDPOINT");
        assertThat(at(container, "livenessProbe", "httpGet")).containsEntry("port", "management")
                .containsEntry("path", "/actuator/health/liveness");
        assertThat(at(container, "readinessProbe", "httpGet")).containsEntry("port", "management")
                .containsEntry("path", "/actuator/health/readiness");
        assertThat(at(one(manifests, "Deployment"), "spec", "template", "metadata", "annotations"))
                .containsEntry("prometheus.io/port", "9090");
        assertThat(portNames(at(one(manifests, "Service"), "spec"), "ports")).containsExactly("http", "management");
        assertThat(at(one(manifests, "Service"), "metadata", "annotations")).containsEntry("management.port", "9090")
                .containsEntry("management.context-path", "/actuator");

        Map<String, Object> dashboard = one(manifests, "ConfigMap");
        assertThat(at(dashboard, "metadata", "labels")).containsEntry("grafana_dashboard", "1");
        JsonMapper json = JsonMapper.builder().build();
        String shipped = (String) at(dashboard, "data").get("tether.json");
        assertThat(json.readTree(shipped)).as("the ConfigMap carries the dashboard as it is in the chart")
                .isEqualTo(json.readTree(Files.readString(CHART.resolve("dashboards/tether.json"))));
    }

    @Test
    void nonDefaultValuesRenderValidManifestsToo() {
        TemplateCommand template = template().set("management.port", "").set("dashboard.enabled", "false")
                .set("allowedHosts[0]", "tether.example.com").set("allowedOrigins[0]", "https://app.example.com")
                .set("allowedOrigins[1]", "http://localhost:3000").set("auth.existingSecret", "tether-token")
                .set("trustedProxies[0]", "10.42.0.0/16").set("trustedProxies[1]", "fd00::/8")
                .set("docker.mountHostSocket", "true").set("persistence.enabled", "false").set("stdio.allowRemote", "true")
                .set("service.type", "NodePort").set("service.port", "8080").set("env.TETHER_SESSION_MAX_SESSIONS", "32");
        List<Map<String, Object>> manifests = render(template);
        assertThat(kinds(manifests)).containsExactlyInAnyOrder("Deployment", "Service");

        Map<String, Object> container = container(manifests);
        Map<String, String> env = env(container);
        assertThat(env).doesNotContainKey("MANAGEMENT_SERVER_PORT").containsEntry("SERVER_PORT", "8080")
                .containsEntry("TETHER_API_ALLOWED_ORIGINS", "https://app.example.com,http://localhost:3000")
                .containsEntry("TETHER_SERVER_TRUSTED_PROXIES", "10.42.0.0/16,fd00::/8")
                .containsEntry("TETHER_STDIO_ALLOW_REMOTE", "true").containsEntry("TETHER_SESSION_MAX_SESSIONS", "32");
        assertThat(env.get("TETHER_API_ALLOWED_HOSTS").split(",")).contains("tether-tether", "tether.example.com");
        assertThat(at(container, "livenessProbe", "httpGet")).containsEntry("port", "http").containsEntry("path", "/actuator/health");
        assertThat(at(container, "readinessProbe", "httpGet")).containsEntry("port", "http").containsEntry("path", "/api/health");
        assertThat(portNames(at(one(manifests, "Service"), "spec"), "ports")).containsExactly("http");
        assertThat(at(one(manifests, "Deployment"), "spec", "template", "metadata", "annotations"))
                .containsEntry("prometheus.io/port", "8080");
    }

    @Test
    void severalReplicasShareAPostgresStoreTheTokenAndTheSecretKey() {
        TemplateCommand template = template().set("replicaCount", "3").set("store.postgres.host", "db.data")
                .set("store.postgres.existingSecret", "tether-db").set("auth.existingSecret", "tether-token")
                .set("store.secretKey.existingSecret", "tether-key");
        List<Map<String, Object>> manifests = render(template);
        assertThat(kinds(manifests)).as("no volume claim: a ReadWriteOnce volume cannot follow three pods")
                .containsExactlyInAnyOrder("Deployment", "Service", "ConfigMap", "PodDisruptionBudget");

        Map<String, Object> spec = at(one(manifests, "Deployment"), "spec");
        assertThat(spec).containsEntry("replicas", 3);
        assertThat(at(spec, "strategy")).containsEntry("type", "RollingUpdate");
        assertThat(at(spec, "strategy", "rollingUpdate")).containsEntry("maxUnavailable", 0);
        Map<String, Object> container = container(manifests);
        assertThat(env(container)).containsEntry("TETHER_STORE_R2DBC_URL", "r2dbc:postgresql://db.data:5432/tether")
                .containsEntry("TETHER_STORE_JDBC_URL", "jdbc:postgresql://db.data:5432/tether")
                .containsEntry("SPRING_R2DBC_USERNAME", "tether").containsEntry("TETHER_REPLICAS_ADDRESS", "$(POD_IP)")
                .containsEntry("TETHER_REPLICAS_DRAIN_DELAY", "5s");
        assertThat(at(spec, "template", "spec")).as("room for the drain, the requests in flight and the children's teardown")
                .containsEntry("terminationGracePeriodSeconds", 45);
        assertThat(secretRefs(container)).containsEntry("SPRING_R2DBC_PASSWORD", "tether-db/password")
                .containsEntry("SPRING_FLYWAY_PASSWORD", "tether-db/password")
                .containsEntry("TETHER_API_TOKEN", "tether-token/token").containsEntry("TETHER_STORE_SECRET_KEY", "tether-key/secret-key");
        assertThat(names(container, "env")).as("POD_IP is defined before the variable that refers to it")
                .containsSubsequence("POD_IP", "TETHER_REPLICAS_ADDRESS");
        assertThat(at(container, "readinessProbe", "httpGet")).as("readiness includes the replica's lease")
                .containsEntry("path", "/actuator/health/readiness");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> volumes = (List<Map<String, Object>>) at(spec, "template", "spec").get("volumes");
        assertThat(volumes).singleElement().satisfies(volume -> assertThat(volume).containsKey("emptyDir"));

        Map<String, Object> budget = at(one(manifests, "PodDisruptionBudget"), "spec");
        assertThat(budget).containsEntry("maxUnavailable", 1);
        assertThat(at(spec, "template", "metadata", "labels")).containsAllEntriesOf(at(budget, "selector", "matchLabels"));
    }

    @Test
    void replicasThatWouldNotShareTheirStateDoNotRender() {
        assertThatThrownBy(() -> template().set("replicaCount", "2").call())
                .hasMessageContaining("replicaCount > 1 needs a shared PostgreSQL store: set store.postgres.host");
        assertThatThrownBy(() -> template().set("replicaCount", "2").set("store.postgres.host", "db")
                .set("store.postgres.existingSecret", "tether-db").call())
                .hasMessageContaining("set auth.existingSecret");
        assertThatThrownBy(() -> template().set("replicaCount", "2").set("store.postgres.host", "db")
                .set("store.postgres.existingSecret", "tether-db").set("auth.existingSecret", "tether-token").call())
                .hasMessageContaining("set store.secretKey.existingSecret");
        assertThatThrownBy(() -> template().set("store.postgres.host", "db").call())
                .hasMessageContaining("store.postgres.host needs store.postgres.existingSecret");
    }

    @Test
    void aZipkinEndpointTurnsTracesOnWithEachPodNamedInItsSpans() {
        List<Map<String, Object>> manifests = render(template().set("tracing.zipkinEndpoint", "http://zipkin.ops:9411/api/v2/spans")
                .set("tracing.samplingProbability", "0.2"));
        Map<String, Object> container = container(manifests);
        assertThat(env(container)).containsEntry("MANAGEMENT_TRACING_EXPORT_ZIPKIN_ENABLED", "true")
                .containsEntry("MANAGEMENT_TRACING_EXPORT_ZIPKIN_ENDPOINT", "http://zipkin.ops:9411/api/v2/spans")
                .containsEntry("MANAGEMENT_TRACING_SAMPLING_PROBABILITY", "0.2");
        assertThat(names(container, "env")).contains("SPRING_APPLICATION_NAME");
    }

    private static TemplateCommand template() {
        return new Helm(CHART).template().withName("tether").withNamespace("ops");
    }

    /** Renders and checks every manifest as Kubernetes would read it. */
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> render(TemplateCommand template) {
        String rendered = template.call();
        List<Map<String, Object>> manifests = new ArrayList<>();
        for (Object document : new Yaml().loadAll(rendered)) {
            if (document != null) {
                manifests.add((Map<String, Object>) document);
            }
        }
        assertThat(manifests).isNotEmpty();
        for (Map<String, Object> manifest : manifests) {
            String what = manifest.get("kind") + " " + at(manifest, "metadata").get("name");
            assertThat(manifest.get("apiVersion")).as(what).isInstanceOf(String.class);
            assertThat(manifest.get("kind")).as(what).isInstanceOf(String.class);
            assertThat((String) at(manifest, "metadata").get("name")).as(what).matches(DNS_1123).hasSizeLessThanOrEqualTo(63);
            for (Object value : at(manifest, "metadata").getOrDefault("labels", Map.of()) instanceof Map<?, ?> labels
                    ? labels.values() : List.of()) {
                assertThat(value).as(what + " label values are strings").isInstanceOf(String.class);
            }
        }
        Map<String, Object> container = container(manifests);
        Set<String> containerPorts = new java.util.HashSet<>();
        for (Map<String, Object> port : (List<Map<String, Object>>) container.get("ports")) {
            assertThat(port.get("containerPort")).as("containerPort").isInstanceOf(Integer.class);
            containerPorts.add((String) port.get("name"));
        }
        for (Map<String, Object> variable : (List<Map<String, Object>>) container.get("env")) {
            assertThat(variable.get("name")).isInstanceOf(String.class);
            if (variable.containsKey("value")) {
                assertThat(variable.get("value")).as("env " + variable.get("name") + " is a string").isInstanceOf(String.class);
            }
        }
        for (String probe : List.of("livenessProbe", "readinessProbe")) {
            assertThat(containerPorts).as(probe + " names a container port").contains((String) at(container, probe, "httpGet").get("port"));
        }
        for (Map<String, Object> port : (List<Map<String, Object>>) at(one(manifests, "Service"), "spec").get("ports")) {
            assertThat(port.get("port")).isInstanceOf(Integer.class);
            assertThat(containerPorts).as("service targetPort names a container port").contains((String) port.get("targetPort"));
        }
        return manifests;
    }

    private static List<String> kinds(List<Map<String, Object>> manifests) {
        return manifests.stream().map(manifest -> (String) manifest.get("kind")).toList();
    }

    private static Map<String, Object> one(List<Map<String, Object>> manifests, String kind) {
        List<Map<String, Object>> found = manifests.stream().filter(manifest -> kind.equals(manifest.get("kind"))).toList();
        assertThat(found).as(kind).hasSize(1);
        return found.get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> container(List<Map<String, Object>> manifests) {
        List<Map<String, Object>> containers = (List<Map<String, Object>>) at(one(manifests, "Deployment"), "spec", "template", "spec")
                .get("containers");
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> env(Map<String, Object> container) {
        return ((List<Map<String, Object>>) container.get("env")).stream().filter(variable -> variable.containsKey("value"))
                .collect(Collectors.toMap(variable -> (String) variable.get("name"), variable -> (String) variable.get("value")));
    }

    /** Variables taken from Secrets, as {@code secret/key}. */
    @SuppressWarnings("unchecked")
    private static Map<String, String> secretRefs(Map<String, Object> container) {
        return ((List<Map<String, Object>>) container.get("env")).stream()
                .filter(variable -> variable.get("valueFrom") instanceof Map<?, ?> from && from.containsKey("secretKeyRef"))
                .collect(Collectors.toMap(variable -> (String) variable.get("name"), variable -> {
                    Map<String, Object> ref = at(variable, "valueFrom", "secretKeyRef");
                    return ref.get("name") + "/" + ref.get("key");
                }));
    }

    @SuppressWarnings("unchecked")
    private static List<String> names(Map<String, Object> container, String key) {
        return ((List<Map<String, Object>>) container.get(key)).stream().map(entry -> (String) entry.get("name")).toList();
    }

    @SuppressWarnings("unchecked")
    private static List<String> portNames(Map<String, Object> spec, String key) {
        return ((List<Map<String, Object>>) spec.get(key)).stream().map(port -> (String) port.get("name")).toList();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(Map<String, Object> node, String... path) {
        Map<String, Object> current = node;
        for (String key : path) {
            current = (Map<String, Object>) Objects.requireNonNull(current.get(key), () -> "no " + key + " in " + node);
        }
        return current;
    }
}
