package dev.tether.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.Keycloak;
import dev.tether.testsupport.PackagedDaemon;

/**
 * What knowing the caller costs a call: {@code POST /api/tools/call} of the fixture's {@code echo} on a plain node
 * child, from 1 and 8 clients, with each credential the packaged daemon takes, in one run: the daemon's token (local mode,
 * the desktop app's and the CLI's, answered without a lookup), a personal API token (local mode: a cached lookup), and with a
 * real Keycloak ({@code TETHER_TEST_KEYCLOAK_URL}) in {@code oidc} mode a Keycloak JWT (an RSA signature checked on every call)
 * and a personal API token (its user's standing checked too). Every call is scoped to its caller (the store filters the
 * connection and the policies by subject) and audited. The same server and call throughout, so the differences are the
 * identity's; the HTTP floor ({@code GET /api/health}, no credential) beside them. Run it with {@code bench/identity.sh}.
 *
 * <p>Arguments: {@code seconds=10} (each load, after a warm-up as long), {@code warmup=20} (seconds of calls before the first figure).
 */
public final class IdentityBenchmark {

    private final int seconds;
    private final int warmup;
    private final List<String[]> rows = new ArrayList<>();

    private IdentityBenchmark(BenchArguments args) {
        seconds = args.integer("seconds", 10);
        warmup = args.integer("warmup", 20);
    }

    public static void main(String[] argv) throws Exception {
        new IdentityBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        System.out.printf("Tether identity benchmark: %d cores, java %s%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        List<String> echo = Fixture.command();
        byte[] call = BenchClient.JSON.writeValueAsBytes(Map.of("address", "tools.bench.org.default.echo", "args", Map.of("text", "who")));

        try (PackagedDaemon daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-identity"), List.of(), Map.of())) {
            BenchClient operator = new BenchClient(daemon);
            operator.addStdioServer("bench", echo);
            operator.refresh("bench");
            String token = operator.post("/api/tokens", Map.of("name", "bench", "subject", "bench-user", "role", "member"))
                    .path("token").asString();
            warm(operator, call);
            measure("local, the daemon's token", operator, call);
            measure("local, a personal API token", new BenchClient(daemon.url(), token), call);
            floor(operator);
        }

        Optional<Keycloak> keycloak = Keycloak.fromEnvironment();
        if (keycloak.isEmpty()) {
            System.out.println("no Keycloak (TETHER_TEST_KEYCLOAK_URL unset): the oidc figures are skipped");
        }
        else {
            Keycloak provider = keycloak.get();
            try (PackagedDaemon daemon = PackagedDaemon.start(jar, Files.createTempDirectory("tether-bench-identity-oidc"), List.of(
                    "--tether.identity.mode=oidc", "--tether.identity.oidc.issuer=" + provider.issuer(),
                    "--tether.identity.oidc.client-id=" + Keycloak.CLIENT, "--tether.identity.oidc.client-secret=" + Keycloak.CLIENT_SECRET),
                    Map.of())) {
                BenchClient operator = new BenchClient(daemon);
                operator.addStdioServer("bench", echo);
                operator.refresh("bench");
                provider.signIn(Integer.parseInt(daemon.url().replaceAll(".*:", "")), "bob");
                BenchClient jwt = new BenchClient(daemon.url(), provider.accessToken("bob"));
                String token = jwt.post("/api/tokens", Map.of("name", "bench")).path("token").asString();
                warm(jwt, call);
                measure("oidc, a Keycloak JWT (signature checked every call)", jwt, call);
                measure("oidc, a personal API token", new BenchClient(daemon.url(), token), call);
                measure("oidc, the daemon's token", operator, call);
            }
        }

        System.out.println();
        System.out.println("| credential | 1 client: p50, calls/s | 8 clients: p50, calls/s |");
        System.out.println("|---|---|---|");
        rows.forEach(row -> System.out.printf("| %s | %s | %s |%n", (Object[]) row));
    }

    private void warm(BenchClient client, byte[] call) throws Exception {
        // A daemon runs for hours: its figures are those of code C2 has compiled.
        CallLoad.run(client, 2, Duration.ofSeconds(warmup), any -> call);
    }

    private void measure(String what, BenchClient client, byte[] call) throws Exception {
        String[] row = { what, "", "" };
        int column = 1;
        for (int clients : new int[] { 1, 8 }) {
            CallLoad.run(client, clients, Duration.ofSeconds(seconds), any -> call);
            CallLoad load = CallLoad.run(client, clients, Duration.ofSeconds(seconds), any -> call);
            if (load.errors() > 0) {
                throw new IllegalStateException(what + ": " + load.errors() + " calls failed");
            }
            row[column++] = String.format("%.2f ms, %.0f/s", load.latencies().p50(), load.rate());
        }
        rows.add(row);
    }

    /** The same client and daemon with no credential and no child: what HTTP alone costs. */
    private void floor(BenchClient client) throws Exception {
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            long start = System.nanoTime();
            client.get("/api/health");
            if (i >= 500) {
                micros.add((System.nanoTime() - start) / 1_000);
            }
        }
        rows.add(new String[] { "GET /api/health (no credential, no child: the HTTP floor)",
                String.format("%.2f ms", Latencies.of(micros).p50()), "" });
    }
}
