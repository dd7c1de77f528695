package dev.tether.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;

/**
 * The desktop app's wait: {@code runs} starts of {@code bin/executor-sidecar} as the app starts it (its environment,
 * a password, a web UI dir), each timed from exec to the {@code EXECUTOR_READY} line on stdout and to the first
 * {@code 200} of the UI's first calls ({@code GET /} and {@code GET /api/integrations} with Basic auth), with the CPU
 * the JVM used until then and its resident memory {@code settle} seconds later. Run it with {@code bench/sidecar-start.sh}.
 *
 * <p>Arguments: {@code runs=5 settle=5 data=kept}. {@code data=kept} starts every run on the data dir the first
 * (uncounted) run made, as the app starts each day on its own; {@code data=fresh} gives each run a new one, the
 * app's very first start (the store created and migrated).
 */
public final class SidecarStartBenchmark {

    private static final String PASSWORD = "bench-password";

    private final int runs;
    private final Duration settle;
    private final boolean freshData;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private SidecarStartBenchmark(BenchArguments args) {
        runs = args.integer("runs", 5);
        settle = Duration.ofSeconds(args.integer("settle", 5));
        String data = args.text("data", "kept");
        if (!data.equals("kept") && !data.equals("fresh")) {
            throw new IllegalArgumentException("data must be kept or fresh, was " + data);
        }
        freshData = data.equals("fresh");
    }

    public static void main(String[] argv) throws Exception {
        new SidecarStartBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private record Sample(double readyMillis, double first200Millis, double cpuMillis, double idleMiB) {
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        Path ui = Files.createTempDirectory("tether-bench-ui");
        Files.writeString(ui.resolve("index.html"), "<!doctype html><title>Executor</title>");
        System.out.printf("Sidecar start benchmark: %d starts on a %s data dir, %s; %d cores, load %s%n", runs,
                freshData ? "fresh" : "kept", jar.getFileName(), Runtime.getRuntime().availableProcessors(),
                Files.readString(Path.of("/proc/loadavg")).strip());
        Path kept = Files.createTempDirectory("tether-bench-sidecar");
        sample(jar, ui, kept); // trains the start-up cache if this build has none yet, and makes the kept store; not counted
        List<Sample> samples = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            Path data = freshData ? Files.createTempDirectory("tether-bench-sidecar") : kept;
            Sample sample = sample(jar, ui, data);
            if (freshData) {
                Samples.delete(data);
            }
            System.out.printf("  start %d: ready line %.0f ms, first 200 %.0f ms, CPU %.0f ms, idle RSS %.0f MiB%n", i + 1,
                    sample.readyMillis(), sample.first200Millis(), sample.cpuMillis(), sample.idleMiB());
            samples.add(sample);
        }
        System.out.printf("p50 of %d: ready line %.2f s (%.2f-%.2f), first 200 %.2f s, CPU %.2f s, idle RSS %.0f MiB%n", runs,
                Samples.p50(samples, Sample::readyMillis) / 1000, Samples.min(samples, Sample::readyMillis) / 1000,
                Samples.max(samples, Sample::readyMillis) / 1000, Samples.p50(samples, Sample::first200Millis) / 1000,
                Samples.p50(samples, Sample::cpuMillis) / 1000, Samples.p50(samples, Sample::idleMiB));
        System.out.printf("load at the end: %s%n", Files.readString(Path.of("/proc/loadavg")).strip());
        Samples.delete(ui);
        Samples.delete(kept);
    }

    private Sample sample(Path jar, Path ui, Path data) throws Exception {
        int port = Fixture.freeLoopbackPort();
        ProcessBuilder builder = new ProcessBuilder(Fixture.projectRoot().resolve("bin/executor-sidecar").toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("EXECUTOR_") || name.startsWith("TETHER_"));
        env.putAll(Map.of("EXECUTOR_PORT", Integer.toString(port), "EXECUTOR_HOST", "127.0.0.1", "EXECUTOR_AUTH_PASSWORD",
                PASSWORD, "EXECUTOR_CLIENT_DIR", ui.toString(), "EXECUTOR_DATA_DIR", data.toString(), "EXECUTOR_SCOPE_DIR",
                data.toString(), "EXECUTOR_WEB_BASE_URL", "http://127.0.0.1:" + port, "EXECUTOR_CLIENT", "desktop",
                "TETHER_JAR", jar.toString()));
        long launched = System.nanoTime();
        Process sidecar = builder.start();
        try {
            BufferedReader stdout = new BufferedReader(new InputStreamReader(sidecar.getInputStream(), StandardCharsets.UTF_8));
            for (String line = stdout.readLine(); ; line = stdout.readLine()) {
                if (line == null) {
                    throw new IllegalStateException("the sidecar ended without a ready line");
                }
                if (line.startsWith("EXECUTOR_READY:")) {
                    break;
                }
            }
            double ready = (System.nanoTime() - launched) / 1e6;
            Thread drain = new Thread(() -> {
                try {
                    stdout.lines().forEach(unused -> { });
                }
                catch (java.io.UncheckedIOException closed) {
                    // the sidecar was stopped
                }
            }, "drain");
            drain.setDaemon(true);
            drain.start();
            String basic = "Basic " + Base64.getEncoder().encodeToString(("executor:" + PASSWORD).getBytes(StandardCharsets.UTF_8));
            for (String path : List.of("/", "/api/integrations")) {
                HttpResponse<Void> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .header("Authorization", basic).build(), HttpResponse.BodyHandlers.discarding());
                if (answer.statusCode() != 200) {
                    throw new IllegalStateException(path + " answered " + answer.statusCode());
                }
            }
            double first200 = (System.nanoTime() - launched) / 1e6;
            double cpu = OsProcesses.cpuTime(sidecar.pid()).toMillis();
            Thread.sleep(settle.toMillis());
            return new Sample(ready, first200, cpu, residentMiB(sidecar.pid()));
        }
        finally {
            sidecar.destroy();
            if (!sidecar.waitFor(30, TimeUnit.SECONDS)) {
                sidecar.destroyForcibly();
            }
        }
    }

    private static double residentMiB(long pid) throws IOException {
        return Files.readString(Path.of("/proc", Long.toString(pid), "status")).lines()
                .filter(line -> line.startsWith("VmRSS:")).mapToLong(line -> Long.parseLong(line.replaceAll("\\D", "")))
                .findFirst().orElseThrow() / 1024.0;
    }
}
