package dev.tether.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import tools.jackson.databind.json.JsonMapper;

/**
 * The packaged daemon started by {@code bin/tether}, as its own process on a free loopback port with a data dir
 * of the caller's: the way a user runs it, for the tests that kill or restart it and for the benchmarks.
 * {@link #start} returns once {@code /api/health} answers, and says how long that took. The launcher execs the
 * JVM, so {@link #pid} is the daemon's JVM and signals reach it as they would from a terminal.
 */
public final class PackagedDaemon implements AutoCloseable {

    /** The property failsafe sets to the jar Maven built. */
    public static final String JAR_PROPERTY = "tether.jar";

    /**
     * When a start is called stuck: the first after a build also trains the launcher's start-up cache, and on two cores
     * shared with other test JVMs a start took 3 minutes at load 25 (2026-12-04), and the first one, training, more
     * than 5 at load 30–40 (HomeDirectoryIT in CI, 2026-12-05). Only a failure waits this long.
     */
    private static final Duration START_BOUND = Duration.ofMinutes(10);
    private static final Duration STOP_BOUND = Duration.ofSeconds(30);
    private static final String TOKEN_SETTING = "--tether.api.token=";

    private final Process process;
    private final int port;
    private final Path dataDir;
    private final Path log;
    private final Duration startedIn;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private String token;

    private PackagedDaemon(Process process, int port, Path dataDir, Path log, Duration startedIn, String token) {
        this.process = process;
        this.port = port;
        this.dataDir = dataDir;
        this.log = log;
        this.startedIn = startedIn;
        this.token = token;
    }

    /** The jar: {@code -Dtether.jar} when failsafe runs, else the one {@code ./mvnw package} left in {@code target/}. */
    public static Optional<Path> jar() {
        String property = System.getProperty(JAR_PROPERTY);
        if (property != null) {
            return Optional.of(Path.of(property)).filter(Files::isRegularFile);
        }
        try (Stream<Path> target = Files.list(Fixture.projectRoot().resolve("target"))) {
            return target.filter(path -> path.getFileName().toString().matches("tether-[^-]+(-SNAPSHOT)?\\.jar")).findFirst();
        } catch (IOException noTarget) {
            return Optional.empty();
        }
    }

    /** The launcher, {@code bin/tether}. */
    public static Path launcher() {
        return Fixture.projectRoot().resolve("bin").resolve("tether");
    }

    /**
     * Starts {@code jar} through {@code bin/tether} with the data dir in {@code TETHER_DATA_DIR}, the daemon
     * {@code arguments} given, and {@code environment} added (e.g. {@code TETHER_JAVA_OPTS}); its output goes to
     * {@code daemon-N.log} in the data dir, one per start.
     */
    public static PackagedDaemon start(Path jar, Path dataDir, List<String> arguments, Map<String, String> environment)
            throws IOException, InterruptedException {
        return startOn(Fixture.freeLoopbackPort(), jar, dataDir, arguments, environment);
    }

    /** As {@link #start(Path, Path, List, Map)}, on {@code port}: a replica started again where a load balancer expects it. */
    public static PackagedDaemon startOn(int port, Path jar, Path dataDir, List<String> arguments, Map<String, String> environment)
            throws IOException, InterruptedException {
        Map<String, String> launcherEnvironment = new HashMap<>(environment);
        launcherEnvironment.put("TETHER_JAR", jar.toString());
        return start(port, List.of(launcher().toString()), dataDir, arguments, launcherEnvironment);
    }

    /**
     * Starts the daemon by {@code command} (the launcher, or for a benchmark's baseline a plain
     * {@code java -jar}), on a free port, with the data dir in {@code TETHER_DATA_DIR}.
     */
    public static PackagedDaemon start(List<String> command, Path dataDir, List<String> arguments, Map<String, String> environment)
            throws IOException, InterruptedException {
        return start(Fixture.freeLoopbackPort(), command, dataDir, arguments, environment);
    }

    private static PackagedDaemon start(int port, List<String> command, Path dataDir, List<String> arguments,
            Map<String, String> environment) throws IOException, InterruptedException {
        Path log = nextLog(dataDir);
        List<String> commandLine = new ArrayList<>(command);
        commandLine.add("--server.port=" + port);
        commandLine.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(commandLine).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("TETHER_DATA_DIR", dataDir.toString());
        builder.environment().putAll(environment);
        long launched = System.nanoTime();
        Process process = builder.start();
        awaitHealthy(process, "http://127.0.0.1:" + port, log);
        // Replicas share a token given as a setting; the daemon then writes none to its data dir.
        String token = arguments.stream().filter(argument -> argument.startsWith(TOKEN_SETTING))
                .map(argument -> argument.substring(TOKEN_SETTING.length())).reduce((first, last) -> last).orElse(null);
        return new PackagedDaemon(process, port, dataDir, log, Duration.ofNanos(System.nanoTime() - launched), token);
    }

    /**
     * Where a test starts daemons side by side ({@code CompletableFuture.supplyAsync(..., SIDE_BY_SIDE)}): a thread
     * each. The default of {@code supplyAsync}, the common pool, has one thread fewer than the machine has cores, one
     * on two cores, and started such "side by side" replicas one after the other.
     */
    public static final Executor SIDE_BY_SIDE = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "packaged-daemon-start");
        thread.setDaemon(true);
        return thread;
    });

    /** The jar for a test that runs it; without one (surefire, or no {@code package} yet) the test is skipped. */
    public static Path jarOrSkip() {
        Optional<Path> jar = jar();
        Prerequisites.require(jar.isPresent(), "no packaged daemon (-Dtether.jar)", "failsafe runs this after `package`");
        return jar.get();
    }

    public int port() {
        return port;
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    /** A request to {@code path} with the daemon's token and a JSON body type, bounded at a minute. */
    public HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(url() + path))
                .header("Authorization", "Bearer " + token())
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60));
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    /** From launching the command to the first {@code 200 ok} of {@code /api/health}. */
    public Duration startedIn() {
        return startedIn;
    }

    /** The bearer token given as {@code --tether.api.token}, else the one the daemon wrote to {@code server-control/auth.json}. */
    public String token() {
        if (token == null) {
            token = JsonMapper.builder().build().readTree(read(dataDir.resolve("server-control").resolve("auth.json")))
                    .get("token").asString();
        }
        return token;
    }

    /** The id the daemon labels its containers with ({@code tether.instance}). */
    public String instanceId() {
        return read(dataDir.resolve("instance-id")).strip();
    }

    /** Resident memory of the daemon's JVM, in MiB, as the kernel counts it. */
    public double residentMiB() {
        String status = read(Path.of("/proc", Long.toString(process.pid()), "status"));
        return status.lines().filter(line -> line.startsWith("VmRSS:"))
                .mapToLong(line -> Long.parseLong(line.replaceAll("\\D", "")))
                .findFirst().orElseThrow() / 1024.0;
    }

    /** CPU time the daemon's JVM has used so far, all its threads, user and system, as the kernel counts it. */
    public Duration cpuTime() {
        return OsProcesses.cpuTime(process.pid());
    }

    /**
     * The nice values of the daemon's threads whose name, as the kernel keeps it (its first 15 characters), matches
     * {@code name}: how a test sees that code threads were lowered.
     */
    public List<Integer> niceOfThreads(Pattern name) {
        // nice is the 17th field after the name
        return threadStats().stream().filter(stat -> name.matcher(threadName(stat)).matches())
                .map(stat -> Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[16])).toList();
    }

    /**
     * The scheduler states of the daemon's threads whose kernel name matches {@code name} ({@code R} runnable, {@code S}
     * sleeping, ...): a thread that spins is runnable at every look, however little CPU a busy host leaves it.
     */
    public List<Character> statesOfThreads(Pattern name) {
        return threadStats().stream().filter(stat -> name.matcher(threadName(stat)).matches())
                .map(stat -> stat.charAt(stat.lastIndexOf(')') + 2)).toList();
    }

    /**
     * CPU time the daemon's threads have used so far, user and system, summed by name as the kernel keeps it (its first
     * 15 characters) without a trailing number, so that a pool's threads count as one: where a load's CPU went.
     */
    public Map<String, Duration> cpuTimeByThreadName() {
        Map<String, Duration> byName = new TreeMap<>();
        for (String stat : threadStats()) {
            byName.merge(threadName(stat).replaceAll("[-#]?\\d+$", ""), OsProcesses.cpuTimeOfStat(stat), Duration::plus);
        }
        return byName;
    }

    /** {@code /proc/PID/task/TID/stat} of each of the daemon's threads alive now. */
    private List<String> threadStats() {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
            List<String> stats = new ArrayList<>();
            for (Path task : tasks.toList()) {
                try {
                    stats.add(Files.readString(task.resolve("stat")));
                }
                catch (IOException ended) {
                    // the thread ended meanwhile
                }
            }
            return stats;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The thread's name, in parentheses in its stat line. */
    private static String threadName(String stat) {
        return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    }

    /** A scrape of {@code /actuator/prometheus}, which asks for the token like the API when it shares the API's port. */
    public PrometheusScrape metrics() throws IOException, InterruptedException {
        return new PrometheusScrape(http.send(request("/actuator/prometheus").GET().build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    /** SIGKILL: no shutdown hook, no teardown. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the daemon did not die of SIGKILL");
        }
    }

    /** SIGTERM, the orderly shutdown a user's Ctrl-C or Kubernetes gives; forced after a bound. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(STOP_BOUND.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IllegalStateException("the daemon did not stop within " + STOP_BOUND + " of SIGTERM; see " + log);
        }
    }

    /** SIGTERM, and the exit status once the daemon has exited, within {@code bound} (or it is killed and this fails). */
    public int terminate(Duration bound) throws InterruptedException {
        terminate();
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IllegalStateException("the daemon did not stop within " + bound + " of SIGTERM; see " + log);
        }
        return process.exitValue();
    }

    /** SIGTERM without waiting: the orderly shutdown begins, and {@link #close} waits for its end. */
    public void terminate() {
        process.destroy();
    }

    public boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop();
        }
    }

    /**
     * Closes every daemon: SIGTERM to all at once, then each awaited as {@link #close} does. Replicas drain as they stop
     * ({@code tether.replicas.drain-delay}, 2 s by default): one after the other, a test's teardown waited that long
     * once per replica.
     */
    public static void closeAll(Collection<PackagedDaemon> daemons) throws InterruptedException {
        List<PackagedDaemon> all = List.copyOf(daemons);
        all.stream().filter(PackagedDaemon::alive).forEach(PackagedDaemon::terminate);
        for (PackagedDaemon daemon : all) {
            daemon.close();
        }
    }

    private static void awaitHealthy(Process process, String url, Path log) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest health = HttpRequest.newBuilder(URI.create(url + "/api/health")).timeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the daemon exited with " + process.exitValue() + " while starting:\n"
                        + Files.readString(log));
            }
            try {
                HttpResponse<String> answer = http.send(health, HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 200 && answer.body().equals("ok")) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(50);
        }
        process.destroyForcibly();
        throw new IllegalStateException("the daemon did not answer /api/health within " + START_BOUND + ":\n" + Files.readString(log));
    }

    private static Path nextLog(Path dataDir) throws IOException {
        Files.createDirectories(dataDir);
        try (Stream<Path> logs = Files.list(dataDir)) {
            long earlier = logs.filter(path -> path.getFileName().toString().matches("daemon-\\d+\\.log")).count();
            return dataDir.resolve("daemon-" + earlier + ".log");
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
