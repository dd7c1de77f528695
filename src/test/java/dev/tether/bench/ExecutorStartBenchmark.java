package dev.tether.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;
import dev.tether.testsupport.PackagedDaemon;

/**
 * Tether's start beside Executor 1.5.9's, alternated in one run so that both meet the same machine: {@code bin/tether}
 * on a kept data dir (the one its first, uncounted start made, as the daemon starts each day), Executor's
 * {@code executor web} on a kept scope, {@code bin/tether} with C1 alone ({@code TETHER_JIT=c1}, as
 * {@code bin/executor-sidecar} starts it for the desktop app) on a kept data dir of its own, and {@code bin/tether} on
 * a fresh data dir, {@code rounds} times in turn. Each
 * is timed from launching the command to the first {@code 200} of {@code GET /api/integrations} (the desktop app's first call; Executor has no {@code /api/health}), with the CPU its process
 * used until then and its resident memory {@code settle} seconds later, idle. Executor is the platform binary of the npm
 * package of {@code src/test/clients}, started directly as the desktop app starts it; {@code bin/tether} execs its
 * JVM, so each is one process. Run it with {@code bench/start-executor.sh}.
 *
 * <p>Arguments: {@code rounds=5 settle=5 c1=true fresh=true baseline=}. {@code baseline=PATH[,PATH...]} adds, in turn
 * with the others, {@code bin/tether} on a kept data dir of its own running each of those jars (builds from before a
 * change, each in a directory of its own, where its extracted copy and cache go): a change's before and after, measured
 * in one run beside Executor. {@code c1=false} and
 * {@code fresh=false} leave out those two ways, for shorter runs.
 */
public final class ExecutorStartBenchmark {

    private static final Duration START_BOUND = Duration.ofSeconds(120);
    /** A first start extracts the jar and trains the launcher's cache: minutes on a loaded machine. */
    private static final Duration FIRST_START_BOUND = Duration.ofMinutes(15);
    /** How {@code bin/executor-sidecar} has {@code bin/tether} start the JVM for the desktop app: C1 alone. */
    private static final Map<String, String> C1_ALONE = Map.of("TETHER_JIT", "c1");

    private final int rounds;
    private final Duration settle;
    private final boolean c1;
    private final boolean fresh;
    private final List<Path> baselines;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

    private ExecutorStartBenchmark(BenchArguments args) {
        rounds = args.integer("rounds", 5);
        settle = Duration.ofSeconds(args.integer("settle", 5));
        c1 = Boolean.parseBoolean(args.text("c1", "true"));
        fresh = Boolean.parseBoolean(args.text("fresh", "true"));
        baselines = java.util.Arrays.stream(args.text("baseline", "").split(",")).filter(before -> !before.isBlank())
                .map(before -> Path.of(before).toAbsolutePath()).toList();
        baselines.stream().filter(before -> !Files.isRegularFile(before)).findFirst().ifPresent(missing -> {
            throw new IllegalArgumentException("baseline=" + missing + ": no such jar");
        });
    }

    public static void main(String[] argv) throws Exception {
        new ExecutorStartBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private record Sample(double startMillis, double cpuMillis, double idleMiB) {
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        // The platform binary the npm package's node script would start, as the desktop app starts it: no node in front.
        Path executor = Fixture.projectRoot().resolve("src/test/clients/node_modules/executor-linux-x64/bin/executor");
        if (!Files.isExecutable(executor)) {
            throw new IllegalStateException(executor + " is missing: run `npm install --no-save` in src/test/clients");
        }
        System.out.printf("Start beside Executor 1.5.9: %d rounds, %d cores, load average %s%n", rounds,
                Runtime.getRuntime().availableProcessors(), Machine.loadAverage());
        Path kept = Files.createTempDirectory("tether-bench-start-kept");
        Path keptC1 = Files.createTempDirectory("tether-bench-start-kept-c1");
        Map<Path, Path> keptBaselines = new LinkedHashMap<>();
        for (Path before : baselines) {
            keptBaselines.put(before, Files.createTempDirectory("tether-bench-start-kept-baseline"));
        }
        Path scope = Files.createTempDirectory("tether-bench-start-executor");
        // The first starts make the kept data dirs and scope (and train the launcher's caches): not counted.
        sample(tether(jar, kept, Map.of()), FIRST_START_BOUND);
        for (Map.Entry<Path, Path> before : keptBaselines.entrySet()) {
            sample(tether(before.getKey(), before.getValue(), Map.of()), FIRST_START_BOUND);
        }
        if (c1) {
            sample(tether(jar, keptC1, C1_ALONE), FIRST_START_BOUND);
        }
        sample(executor(executor, scope));

        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            samples.computeIfAbsent("bin/tether, kept data dir", any -> new ArrayList<>()).add(sample(tether(jar, kept, Map.of())));
            samples.computeIfAbsent("executor web 1.5.9, kept scope", any -> new ArrayList<>()).add(sample(executor(executor, scope)));
            for (Map.Entry<Path, Path> before : keptBaselines.entrySet()) {
                samples.computeIfAbsent("bin/tether, kept data dir, baseline " + before.getKey().getParent().getFileName() + "/"
                        + before.getKey().getFileName(), any -> new ArrayList<>()).add(sample(tether(before.getKey(), before.getValue(), Map.of())));
            }
            if (c1) {
                samples.computeIfAbsent("bin/tether, C1 alone (as the desktop app's sidecar), kept data dir", any -> new ArrayList<>())
                        .add(sample(tether(jar, keptC1, C1_ALONE)));
            }
            if (fresh) {
                Path dataDir = Files.createTempDirectory("tether-bench-start-fresh");
                samples.computeIfAbsent("bin/tether, fresh data dir", any -> new ArrayList<>()).add(sample(tether(jar, dataDir, Map.of())));
                Samples.delete(dataDir);
            }
        }
        System.out.printf("%n| start | to first 200, p50 (min–max) | CPU to first 200 | idle RSS | load |%n|---|---|---|---|---|%n");
        String load = Machine.loadAverage();
        samples.forEach((way, list) -> System.out.printf("| %s | %.2f s (%.2f–%.2f) | %.2f s | %.0f MiB | %s |%n", way,
                Samples.p50(list, Sample::startMillis) / 1000, Samples.min(list, Sample::startMillis) / 1000,
                Samples.max(list, Sample::startMillis) / 1000, Samples.p50(list, Sample::cpuMillis) / 1000,
                Samples.p50(list, Sample::idleMiB), load));
        Samples.delete(kept);
        Samples.delete(keptC1);
        for (Path dataDir : keptBaselines.values()) {
            Samples.delete(dataDir);
        }
        Samples.delete(scope);
    }

    /** A start: the command, the port it answers on, and the process whose CPU and memory count. */
    private record Start(ProcessBuilder command, int port, String token) {
    }

    private static Start tether(Path jar, Path dataDir, Map<String, String> environment) throws IOException {
        int port = Fixture.freeLoopbackPort();
        ProcessBuilder command = new ProcessBuilder(PackagedDaemon.launcher().toString(), "--server.port=" + port,
                "--tether.api.token=bench").redirectErrorStream(true).redirectOutput(dataDir.resolveSibling(dataDir.getFileName() + ".log").toFile());
        command.environment().put("TETHER_JAR", jar.toString());
        command.environment().put("TETHER_DATA_DIR", dataDir.toString());
        command.environment().putAll(environment);
        return new Start(command, port, "bench");
    }

    private static Start executor(Path cli, Path scope) throws IOException {
        int port = Fixture.freeLoopbackPort();
        Path home = Files.createDirectories(scope.resolve("home"));
        ProcessBuilder command = new ProcessBuilder(cli.toString(), "web", "--port", Integer.toString(port), "--hostname", "127.0.0.1",
                "--auth-token", "bench", "--scope", scope.resolve("scope").toString())
                .redirectErrorStream(true).redirectOutput(scope.resolve("executor.log").toFile());
        command.environment().put("HOME", home.toString());
        return new Start(command, port, "bench");
    }

    /** Launches, waits for the first 200, reads the CPU, lets it idle, reads its memory, stops it (SIGTERM, bounded). */
    private Sample sample(Start start) throws Exception {
        return sample(start, START_BOUND);
    }

    private Sample sample(Start start, Duration bound) throws Exception {
        long launched = System.nanoTime();
        Process process = start.command().start();
        try {
            HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + start.port() + "/api/integrations"))
                    .header("Authorization", "Bearer " + start.token()).timeout(Duration.ofSeconds(2)).build();
            long deadline = launched + bound.toNanos();
            while (true) {
                try {
                    if (http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        break;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("no 200 from " + start.command().command() + " on port " + start.port());
                }
                Thread.sleep(5);
            }
            double millis = (System.nanoTime() - launched) / 1e6;
            double cpu = OsProcesses.cpuTime(process.pid()).toMillis();
            Thread.sleep(settle.toMillis());
            return new Sample(millis, cpu, residentMiB(process.pid()));
        } finally {
            List<ProcessHandle> tree = process.descendants().toList();
            process.destroy();
            tree.forEach(ProcessHandle::destroy);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                tree.forEach(ProcessHandle::destroyForcibly);
            }
        }
    }

    private static double residentMiB(long pid) {
        try {
            return Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")).stream().filter(line -> line.startsWith("VmRSS:"))
                    .mapToLong(line -> Long.parseLong(line.replaceAll("\\D", ""))).findFirst().orElse(0) / 1024.0;
        } catch (IOException gone) {
            return 0;
        }
    }
}
