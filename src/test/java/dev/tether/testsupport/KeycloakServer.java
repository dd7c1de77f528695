package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keycloak as a team runs it, from its distribution on Maven Central ({@code org.keycloak:keycloak-quarkus-dist},
 * which {@code .ci/run} unpacks into {@code .keycloak/}): {@code start-dev} on a free loopback port with an in-memory
 * database, the experimental {@code cimd} feature (Client ID Metadata Documents), its HTTP access log on (so a test
 * can tell from Keycloak's side which endpoints were called) and a trust store a test gives it (to fetch from a
 * server with a self-signed certificate). Realms are created through its admin API. Keycloak needs Java 21 or newer:
 * {@code TETHER_TEST_KEYCLOAK_JAVA}, else the newest JDK under {@code /usr/lib/jvm} that is one.
 *
 * <p>Without the distribution (or such a JDK) the test that needs it is skipped, unless CI requires it.
 */
public final class KeycloakServer implements AutoCloseable {

    public static final String VERSION = "26.7.3";
    private static final Duration START_BOUND = Duration.ofMinutes(6);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Process process;
    private final int port;
    private final String adminPassword;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private KeycloakServer(Process process, int port, String adminPassword, Path log) {
        this.process = process;
        this.port = port;
        this.adminPassword = adminPassword;
        this.log = log;
    }

    /** Where the distribution is: {@code TETHER_TEST_KEYCLOAK_HOME}, else {@code .keycloak/keycloak-<VERSION>}. */
    static Path home() {
        String configured = System.getenv("TETHER_TEST_KEYCLOAK_HOME");
        return configured != null && !configured.isBlank() ? Path.of(configured)
                : Fixture.projectRoot().resolve(".keycloak/keycloak-" + VERSION);
    }

    /** Starts it, trusting {@code trusted} (a PEM certificate) for what it fetches, and waits (bounded) until it answers. */
    public static KeycloakServer start(Path trusted, Path log) {
        Path home = home();
        Optional<Path> java = java();
        Prerequisites.require(java.isPresent(), "no JDK 21 or newer for Keycloak", "set TETHER_TEST_KEYCLOAK_JAVA");
        Prerequisites.require(Files.isExecutable(home.resolve("bin/kc.sh")), "no Keycloak " + VERSION + " at " + home,
                ".ci/run unpacks it");
        int port = Fixture.freeLoopbackPort();
        String adminPassword = "admin-" + Long.toHexString(System.nanoTime());
        try {
            ProcessBuilder builder = new ProcessBuilder(List.of(home.resolve("bin/kc.sh").toString(), "start-dev", "--features=cimd",
                    "--db=dev-mem", "--http-host=127.0.0.1", "--http-port=" + port, "--http-management-port=" + Fixture.freeLoopbackPort(),
                    "--http-access-log-enabled=true", "--truststore-paths=" + trusted.toAbsolutePath()))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().put("JAVA_HOME", java.get().toString());
            builder.environment().put("KC_BOOTSTRAP_ADMIN_USERNAME", "admin");
            builder.environment().put("KC_BOOTSTRAP_ADMIN_PASSWORD", adminPassword);
            KeycloakServer server = new KeycloakServer(builder.start(), port, adminPassword, log);
            try {
                server.awaitAnswering();
            }
            catch (AssertionError notAnswering) {
                server.close();
                throw notAnswering;
            }
            return server;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** {@code http://127.0.0.1:<port>} */
    public String origin() {
        return "http://127.0.0.1:" + port;
    }

    /** A realm's issuer, as Keycloak names it for requests to {@link #origin()}. */
    public String issuer(String realm) {
        return origin() + "/realms/" + realm;
    }

    /** Creates a realm from its JSON representation (users, client scopes, client policies and all). */
    public void createRealm(String representation) {
        HttpResponse<String> created = send(HttpRequest.newBuilder(URI.create(origin() + "/admin/realms"))
                .header("Authorization", "Bearer " + adminToken()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(representation)));
        if (created.statusCode() != 201) {
            fail("Keycloak refused the realm: " + created.statusCode() + " " + created.body());
        }
    }

    /** A GET of its admin API, e.g. {@code /admin/realms/tether/clients}. */
    public JsonNode admin(String path) {
        HttpResponse<String> answer = send(HttpRequest.newBuilder(URI.create(origin() + path)).header("Authorization", "Bearer " + adminToken()).GET());
        if (answer.statusCode() != 200) {
            fail("Keycloak's admin API answered " + answer.statusCode() + " to " + path + ": " + answer.body());
        }
        return JSON.readTree(answer.body());
    }

    /** The request lines of its HTTP access log so far, e.g. {@code "POST /realms/tether/clients-registrations/openid-connect HTTP/1.1"}. */
    public List<String> requests() {
        try (Stream<String> lines = Files.lines(log)) {
            List<String> requests = new ArrayList<>();
            lines.filter(line -> line.contains("\"") && line.contains(" HTTP/")).forEach(line -> {
                int start = line.indexOf('"');
                int end = line.indexOf('"', start + 1);
                if (end > start) {
                    requests.add(line.substring(start + 1, end));
                }
            });
            return requests;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private String adminToken() {
        HttpResponse<String> token = send(HttpRequest.newBuilder(URI.create(origin() + "/realms/master/protocol/openid-connect/token"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("grant_type=password&client_id=admin-cli&username=admin&password="
                        + URLEncoder.encode(adminPassword, StandardCharsets.UTF_8))));
        if (token.statusCode() != 200) {
            fail("Keycloak's admin refused: " + token.statusCode() + " " + token.body());
        }
        return JSON.readTree(token.body()).path("access_token").asString();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Its startup log line says it listens; then the master realm answers. Keycloak takes a while on a busy machine. */
    private void awaitAnswering() throws IOException {
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (true) {
            if (!process.isAlive()) {
                fail("Keycloak exited with " + process.exitValue() + ": " + tail());
            }
            if (System.nanoTime() > deadline) {
                fail("Keycloak did not answer within " + START_BOUND.toSeconds() + " s: " + tail());
            }
            if (Files.readString(log).contains("Listening on:")) {
                try {
                    if (http.send(HttpRequest.newBuilder(URI.create(origin() + "/realms/master")).timeout(Duration.ofSeconds(10)).GET().build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        return;
                    }
                }
                catch (IOException notYet) {
                    // listening, but not answering yet
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(ex);
                }
            }
            try {
                Thread.sleep(500);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
    }

    private String tail() throws IOException {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    /** The newest JDK of 21 or newer: {@code TETHER_TEST_KEYCLOAK_JAVA}, else under {@code /usr/lib/jvm}. */
    private static Optional<Path> java() {
        String configured = System.getenv("TETHER_TEST_KEYCLOAK_JAVA");
        if (configured != null && !configured.isBlank()) {
            return Optional.of(Path.of(configured));
        }
        if (Runtime.version().feature() >= 21) {
            return Optional.of(Path.of(System.getProperty("java.home")));
        }
        try (Stream<Path> jdks = Files.list(Path.of("/usr/lib/jvm"))) {
            return jdks.filter(jdk -> Files.isExecutable(jdk.resolve("bin/java")) && feature(jdk) >= 21)
                    .max((a, b) -> Integer.compare(feature(a), feature(b)));
        }
        catch (IOException ex) {
            return Optional.empty();
        }
    }

    /** The feature version a JDK's {@code release} file names, 0 when it names none. */
    private static int feature(Path jdk) {
        try {
            for (String line : Files.readAllLines(jdk.resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    String version = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                    return Integer.parseInt(version.split("[.+-]")[0]);
                }
            }
        }
        catch (IOException | NumberFormatException ex) {
            return 0;
        }
        return 0;
    }

    /** {@code kc.sh} runs Keycloak's JVM as its child: that is stopped first, then the script. */
    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.descendants().forEach(child -> child.onExit().orTimeout(20, java.util.concurrent.TimeUnit.SECONDS)
                .exceptionally(late -> {
                    child.destroyForcibly();
                    return child;
                }).join());
        OsProcesses.stop(process);
    }
}
