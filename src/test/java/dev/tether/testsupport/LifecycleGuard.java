package dev.tether.testsupport;

import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

import dev.tether.daemon.TetherProperties;
import dev.tether.docker.InstanceId;

/**
 * Gives each lifecycle test its own marker, directory, data dir and Tether instance id, launches the fixture
 * so that every process and container it starts can be found again by asking the OS and the Docker engine,
 * and, after the test, fails it if any of them is still there.
 *
 * <p>Register it per test instance:
 * <pre>{@code @RegisterExtension final LifecycleGuard guard = new LifecycleGuard();}</pre>
 *
 * <p>Every fixture launched through {@link #plain} or {@link #docker} carries the test's marker in its command
 * line (its {@code --record} and {@code --pid-file} paths live in the test's directory, which Docker bind-mounts
 * at the same path), so {@link OsProcesses#matching(String)} finds the plain child, the {@code docker run}
 * client and the server inside the container alike; a plain fixture's grandchild is found through its pid
 * file. Containers carry {@value #RUN_LABEL}{@code =<marker>} and, when started through Tether,
 * {@code tether.instance=<instance id>}.
 *
 * <p>After each test the guard waits up to its settle time (teardowns are detached from the pipelines that
 * start them, so they may still be finishing), then kills and removes whatever is left and fails the test,
 * naming the survivors. Only what this test started is touched: other suites may share the engine.
 */
public final class LifecycleGuard implements BeforeEachCallback, AfterEachCallback {

    /** Label put on every container a guarded test starts, valued with the test's marker. */
    public static final String RUN_LABEL = "dev.tether.test.run";

    /** Tether's own label naming the instance that started a container. */
    public static final String INSTANCE_LABEL = "tether.instance";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Duration POLL = Duration.ofMillis(50);
    private static final Set<Path> LATE_DIRS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LATE_DIRS.forEach(LifecycleGuard::deleteQuietly),
                "lifecycle-guard-cleanup"));
    }

    private final Duration settle;
    private final List<Path> hostPidFiles = new CopyOnWriteArrayList<>();
    private final List<Long> watchedPids = new CopyOnWriteArrayList<>();
    private final AtomicInteger launches = new AtomicInteger();
    private String marker;
    private Path dir;
    private TetherProperties tether;
    private String instanceId;

    /** A guard that gives teardowns still running after a test 10 s to finish. */
    public LifecycleGuard() {
        this(Duration.ofSeconds(10));
    }

    public LifecycleGuard(Duration settle) {
        this.settle = settle;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        byte[] bytes = new byte[5];
        RANDOM.nextBytes(bytes);
        marker = "tlt" + HexFormat.of().formatHex(bytes);
        dir = Files.createTempDirectory(marker + "-").toRealPath();
        tether = new TetherProperties(dir.resolve("data"));
        instanceId = new InstanceId(tether).value();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (marker == null) {
            return; // beforeEach failed: nothing was started
        }
        List<String> leftovers = new ArrayList<>();
        long deadline = System.nanoTime() + settle.toNanos();
        List<Long> processes = awaitProcessesGone(deadline);
        if (!processes.isEmpty()) {
            leftovers.add(processes.size() + " process(es) still alive " + settle.toMillis() + " ms after the test: "
                    + processes.stream().map(OsProcesses::describe).collect(Collectors.joining("; ")));
            processes.forEach(pid -> ProcessHandle.of(pid).ifPresent(handle -> {
                handle.descendants().forEach(ProcessHandle::destroyForcibly);
                handle.destroyForcibly();
            }));
        }
        List<Container> containers = dockerAvailable() ? awaitContainersGone(deadline) : List.of();
        if (!containers.isEmpty()) {
            leftovers.add(containers.size() + " container(s) still present " + settle.toMillis() + " ms after the test: "
                    + containers.stream().map(DockerContainers::describe).collect(Collectors.joining("; ")));
            containers.forEach(LifecycleGuard::removeQuietly);
        }
        List<String> ledger = awaitLedgerEmpty(deadline);
        if (!ledger.isEmpty()) {
            leftovers.add("the child ledger still lists " + ledger);
        }
        deleteQuietly(dir);
        // A teardown that finishes late may write its ledger again: delete what is left when the JVM exits.
        LATE_DIRS.add(dir);
        if (!leftovers.isEmpty()) {
            throw new AssertionError("test " + context.getDisplayName() + " left things behind: "
                    + String.join(" | ", leftovers));
        }
    }

    /** Unique to this test; found in the command line of every process launched through this guard. */
    public String marker() {
        return marker;
    }

    /** This test's own directory; its path holds the marker. */
    public Path dir() {
        return dir;
    }

    /** Settings whose data dir is fresh for this test (so is the instance id derived from it). */
    public TetherProperties tether() {
        return tether;
    }

    /** The Tether instance id a component built on {@link #tether()} labels its containers with. */
    public String instanceId() {
        return instanceId;
    }

    /** Also checks after the test that {@code pid} has gone: for a process found by other means. */
    public void watch(long pid) {
        watchedPids.add(pid);
    }

    /** {@code docker run} options that make a container of this test findable: the label and the bind mount. */
    public List<String> dockerRunOptions() {
        return List.of("-v", dir + ":" + dir, "--label", RUN_LABEL + "=" + marker);
    }

    /** The fixture as a plain child, with this test's {@code --pid-file}, {@code --record} and {@code --signals}. */
    public Launch plain(String... flags) {
        int n = launches.incrementAndGet();
        Path pidFile = dir.resolve("plain-" + n + ".pids");
        Path record = dir.resolve("plain-" + n + ".record");
        Path signals = dir.resolve("plain-" + n + ".signals");
        hostPidFiles.add(pidFile);
        List<String> argv = Fixture.command(withFiles(flags, pidFile, record, signals));
        return new Launch(argv, record, pidFile, signals, false);
    }

    /** The fixture in {@code docker run -i --rm}, labelled and bind-mounted for this test. */
    public Launch docker(String... flags) {
        return docker(List.of(), flags);
    }

    /** As {@link #docker(String...)}, with more {@code docker run} options before the image. */
    public Launch docker(List<String> moreRunOptions, String... flags) {
        int n = launches.incrementAndGet();
        // The pid file holds the container's own pids, which mean nothing on the host: never read as host pids.
        Path pidFile = dir.resolve("docker-" + n + ".container-pids");
        Path record = dir.resolve("docker-" + n + ".record");
        List<String> options = new ArrayList<>(dockerRunOptions());
        options.addAll(moreRunOptions);
        // No --signals: a container's pids mean nothing on the host, so it cannot be probed from here.
        List<String> argv = Fixture.dockerCommand(options, withFiles(flags, pidFile, record, null));
        return new Launch(argv, record, pidFile, dir.resolve("docker-" + n + ".signals"), true);
    }

    private static String[] withFiles(String[] flags, Path pidFile, Path record, Path signals) {
        List<String> all = new ArrayList<>(Arrays.asList(flags));
        all.add("--pid-file=" + pidFile);
        all.add("--record=" + record);
        if (signals != null) {
            all.add("--signals=" + signals);
        }
        return all.toArray(String[]::new);
    }

    /** Every host pid this test is known to have started and that is still alive, polled until the deadline. */
    private List<Long> awaitProcessesGone(long deadline) {
        while (true) {
            Set<Long> suspects = new LinkedHashSet<>(watchedPids);
            hostPidFiles.forEach(file -> suspects.addAll(readPids(file)));
            OsProcesses.matching(marker).forEach(handle -> suspects.add(handle.pid()));
            List<Long> alive = suspects.stream().filter(OsProcesses::alive).toList();
            if (alive.isEmpty() || System.nanoTime() - deadline > 0) {
                return alive;
            }
            sleep();
        }
    }

    /** Tether forgets a child in its ledger just after the child's teardown reported: wait for that too. */
    private List<String> awaitLedgerEmpty(long deadline) {
        Path ledger = tether.dataDir().resolve("children.ledger");
        while (true) {
            List<String> entries = readLines(ledger);
            if (entries.isEmpty() || System.nanoTime() - deadline > 0) {
                return entries;
            }
            sleep();
        }
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.exists(file) ? Files.readAllLines(file) : List.of();
        }
        catch (IOException ex) {
            return List.of();
        }
    }

    private List<Container> awaitContainersGone(long deadline) {
        while (true) {
            List<Container> present = Stream.concat(
                            DockerContainers.withLabel(RUN_LABEL, marker).stream(),
                            DockerContainers.withLabel(INSTANCE_LABEL, instanceId).stream())
                    .collect(Collectors.toMap(Container::getId, c -> c, (a, b) -> a))
                    .values().stream().toList();
            if (present.isEmpty() || System.nanoTime() - deadline > 0) {
                return present;
            }
            sleep();
        }
    }

    /** The pids in a fixture's pid file: its own, then its grandchild's; none if it has not written one. */
    public static List<Long> readPids(Path pidFile) {
        try {
            if (!Files.exists(pidFile)) {
                return List.of();
            }
            return Files.readAllLines(pidFile).stream().map(String::strip).filter(line -> line.matches("\\d+"))
                    .map(Long::parseLong).toList();
        }
        catch (IOException ex) {
            return List.of();
        }
    }

    private static boolean dockerAvailable() {
        return DockerClientFactory.instance().isDockerAvailable();
    }

    private static void removeQuietly(Container container) {
        try {
            DockerClientFactory.instance().client().removeContainerCmd(container.getId())
                    .withForce(true).withRemoveVolumes(true).exec();
        }
        catch (NotFoundException | ConflictException ex) {
            // already gone, or its removal is in progress
        }
    }

    private static void deleteQuietly(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (Stream<Path> tree = Files.walk(root)) {
            tree.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                }
                catch (IOException ex) {
                    // a file a container still writes; the OS cleans the temp dir eventually
                }
            });
        }
        catch (IOException | UncheckedIOException ex) {
            // best effort
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for leftovers to go", ex);
        }
    }

    /**
     * One launch of the fixture: its command line and the files through which the test learns what it does.
     *
     * @param argv     the command line to give Tether
     * @param record   the fixture's {@code --record} file: the method of every message it received, one a line
     * @param pidFile  the fixture's {@code --pid-file}: its pid and its grandchild's (container pids for Docker)
     * @param signals  the fixture's {@code --signals}: the SIGTERMs it and its grandchild got, and their probes' answers
     * @param inDocker whether the fixture runs in {@code docker run -i --rm}
     */
    public record Launch(List<String> argv, Path record, Path pidFile, Path signals, boolean inDocker) {

        /**
         * Whether anything signalled host process {@code pid} (the fixture or its grandchild, up and idle) before now:
         * sends it a probe (SIGWINCH) and waits for its answer. The kernel delivers pending signals lowest number first,
         * so a SIGTERM sent before the probe is recorded before the answer, and a SIGKILL or an obeyed SIGTERM means
         * no answer at all, which fails. Answers the signals it recorded before the probe, in order (e.g. [SIGTERM]):
         * an event to wait on, where a pause of fixed length would prove nothing on a slow host.
         */
        public List<String> probe(long pid, Duration bound) {
            String answer = "probed " + pid;
            long before = signalLines().stream().filter(answer::equals).count();
            // A node process catches SIGWINCH only once its script has installed the handler; before, it is ignored.
            long deadline = System.nanoTime() + bound.toNanos();
            while (!catchesSigwinch(pid)) {
                if (!OsProcesses.alive(pid)) {
                    throw new AssertionError("pid " + pid + " ended before it could be probed; it recorded " + signalLines());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("pid " + pid + " did not install its probe handler within " + bound);
                }
                sleep();
            }
            try {
                Process kill = new ProcessBuilder("kill", "-WINCH", Long.toString(pid)).redirectErrorStream(true).start();
                if (!kill.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS) || kill.exitValue() != 0) {
                    throw new AssertionError("could not probe pid " + pid + " (gone?): " + new String(kill.getInputStream().readAllBytes()));
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            while (signalLines().stream().filter(answer::equals).count() <= before) {
                if (!OsProcesses.alive(pid)) {
                    throw new AssertionError("pid " + pid + " ended before it answered the probe: a signal ended it;"
                            + " it recorded " + signalLines());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("pid " + pid + " did not answer the probe within " + bound + "; " + signalLines());
                }
                sleep();
            }
            List<String> seen = new ArrayList<>();
            long answers = 0;
            for (String line : signalLines()) {
                if (line.equals(answer) && ++answers > before) {
                    break;
                }
                if (line.endsWith(" " + pid) && !line.startsWith("probed ")) {
                    seen.add(line.substring(0, line.indexOf(' ')));
                }
            }
            return seen;
        }

        /** Whether SIGWINCH (28) is among the signals the process catches ({@code SigCgt} in its status, a hex mask). */
        private static boolean catchesSigwinch(long pid) {
            try {
                return Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")).stream()
                        .filter(line -> line.startsWith("SigCgt:"))
                        .anyMatch(line -> (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << (28 - 1))) != 0);
            }
            catch (IOException gone) {
                return false;
            }
        }

        private List<String> signalLines() {
            try {
                return Files.exists(signals) ? Files.readAllLines(signals) : List.of();
            }
            catch (IOException ex) {
                return List.of();
            }
        }

        /** The methods the fixture has received so far, in order. */
        public List<String> recorded() {
            try {
                return Files.exists(record) ? Files.readAllLines(record) : List.of();
            }
            catch (IOException ex) {
                return List.of();
            }
        }

        /** Polls until the fixture has received a message whose method is {@code method}; fails after {@code bound}. */
        public void awaitRecorded(String method, Duration bound) {
            long deadline = System.nanoTime() + bound.toNanos();
            while (recorded().stream().noneMatch(line -> line.equals(method) || line.startsWith(method + " "))) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the fixture did not receive " + method + " within " + bound
                            + "; it received " + recorded());
                }
                sleep();
            }
        }

        /** Host pids of a plain fixture and its grandchild, once it has written them; empty for Docker. */
        public List<Long> hostPids() {
            return inDocker ? List.of() : readPids(pidFile);
        }

        /** Polls until a plain fixture has written {@code count} pids (itself, then its grandchild). */
        public List<Long> awaitHostPids(int count, Duration bound) {
            if (inDocker) {
                throw new IllegalStateException("a containerised fixture's pid file holds container pids");
            }
            long deadline = System.nanoTime() + bound.toNanos();
            while (hostPids().size() < count) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the fixture did not write " + count + " pid(s) to " + pidFile
                            + " within " + bound);
                }
                sleep();
            }
            return hostPids();
        }
    }
}
