package dev.tether.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;


import dev.tether.testsupport.PackagedDaemon;

/**
 * What the packaged daemon costs to start and to keep: {@code runs} starts on a fresh data dir and on one holding
 * {@code connections} × {@code tools} stored tools, each timed from launching the command to the first 200 of
 * {@code /api/health}, with the CPU the JVM used until then, its resident memory once idle ({@code settle}
 * seconds after the 200) and after one full collection ({@code jcmd GC.run}). Three ways to start are compared:
 * plain {@code java -jar} on Java 17 (the baseline a user gets without the launcher), {@code bin/tether} made to
 * use that Java 17, and {@code bin/tether} as it is (the JVM, flags and start-up cache it picks). Run it with
 * {@code bench/start.sh}.
 *
 * <p>Arguments: {@code runs=5 connections=50 tools=100 settle=5 java17=/usr/lib/jvm/java-17-openjdk-amd64}.
 */
public final class StartBenchmark {


    private final int runs;
    private final int connections;
    private final int tools;
    private final Duration settle;
    private final Path java17;

    private StartBenchmark(BenchArguments args) {
        runs = args.integer("runs", 5);
        connections = args.integer("connections", 50);
        tools = args.integer("tools", 100);
        settle = Duration.ofSeconds(args.integer("settle", 5));
        java17 = Path.of(args.text("java17", "/usr/lib/jvm/java-17-openjdk-amd64"));
    }

    public static void main(String[] argv) throws Exception {
        new StartBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private record Way(String name, List<String> command, Map<String, String> environment) {
    }

    private record Sample(double startMillis, double cpuMillis, double idleMiB, double afterGcMiB) {
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        System.out.printf("Tether start benchmark: %d starts per row, %s; %d cores, %s%n", runs, jar.getFileName(),
                Runtime.getRuntime().availableProcessors(), Files.readString(Path.of("/proc/loadavg")).strip());

        long training = System.nanoTime();
        launcher(jar, Map.of());
        System.out.printf("bin/tether --train (once per build and JVM): %.1f s%n", (System.nanoTime() - training) / 1e9);
        launcher(jar, Map.of("TETHER_JAVA_HOME", java17.toString()));

        Path stored = Files.createTempDirectory("tether-bench-start-stored");
        long seeding = System.nanoTime();
        try (PackagedDaemon seed = PackagedDaemon.start(jar, stored, List.of(), Map.of())) {
            new BenchClient(seed).addFixtureServers(connections, tools);
        }
        System.out.printf("seeded a data dir with %d stored tools in %.0f s%n", connections * tools, (System.nanoTime() - seeding) / 1e9);

        List<Way> ways = List.of(
                new Way("Java 17, java -jar", List.of(java17.resolve("bin/java").toString(), "-jar", jar.toString()), Map.of()),
                new Way("bin/tether, Java 17", List.of(PackagedDaemon.launcher().toString()),
                        Map.of("TETHER_JAR", jar.toString(), "TETHER_JAVA_HOME", java17.toString())),
                new Way("bin/tether", List.of(PackagedDaemon.launcher().toString()), Map.of("TETHER_JAR", jar.toString())));
        System.out.printf("%-24s %-14s %28s %12s %12s %12s%n", "way", "data dir", "to first 200 p50 (min-max)", "CPU p50",
                "idle RSS", "after GC");
        for (Way way : ways) {
            for (Path seedDir : new Path[] {null, stored}) {
                List<Sample> samples = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    samples.add(sample(way, seedDir));
                }
                System.out.printf("%-24s %-14s %28s %12s %12s %12s%n", way.name(),
                        seedDir == null ? "fresh" : (connections * tools) + " tools",
                        String.format("%.2f s (%.2f-%.2f)", Samples.p50(samples, Sample::startMillis) / 1000,
                                Samples.min(samples, Sample::startMillis) / 1000, Samples.max(samples, Sample::startMillis) / 1000),
                        String.format("%.2f s", Samples.p50(samples, Sample::cpuMillis) / 1000),
                        String.format("%.0f MiB", Samples.p50(samples, Sample::idleMiB)),
                        String.format("%.0f MiB", Samples.p50(samples, Sample::afterGcMiB)));
            }
        }
        Samples.delete(stored);
    }

    private Sample sample(Way way, Path seedDir) throws Exception {
        Path dataDir = Files.createTempDirectory("tether-bench-start");
        if (seedDir != null) {
            copyStore(seedDir, dataDir);
        }
        try (PackagedDaemon daemon = PackagedDaemon.start(way.command(), dataDir, List.of(), way.environment())) {
            double cpu = daemon.cpuTime().toMillis();
            Thread.sleep(settle.toMillis());
            double idle = daemon.residentMiB();
            collect(daemon.pid());
            Thread.sleep(500);
            return new Sample(daemon.startedIn().toMillis(), cpu, idle, daemon.residentMiB());
        } finally {
            Samples.delete(dataDir);
        }
    }

    /** A full collection in the daemon, by the jcmd beside the java it runs (the crowd benchmark uses it too). */
    static void collect(long pid) throws IOException, InterruptedException {
        Path java = Path.of("/proc", Long.toString(pid), "exe").toRealPath();
        Process jcmd = new ProcessBuilder(java.resolveSibling("jcmd").toString(), Long.toString(pid), "GC.run")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!jcmd.waitFor(60, TimeUnit.SECONDS)) {
            jcmd.destroyForcibly();
            throw new IllegalStateException("jcmd GC.run did not finish within a minute");
        }
    }

    /** The stored state (store, token, instance id), not the seed daemon's logs or ledger. */
    private static void copyStore(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : files.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().endsWith(".log")).toList()) {
                Path target = to.resolve(from.relativize(file));
                Files.createDirectories(target.getParent());
                Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    /** {@code bin/tether --train}, so that no timed start pays for training. */
    private static void launcher(Path jar, Map<String, String> environment) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(PackagedDaemon.launcher().toString(), "--train").inheritIO();
        builder.environment().put("TETHER_JAR", jar.toString());
        builder.environment().putAll(environment);
        Process process = builder.start();
        if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
            throw new IllegalStateException("bin/tether --train failed");
        }
    }
}
