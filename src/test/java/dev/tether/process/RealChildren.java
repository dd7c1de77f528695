package dev.tether.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import reactor.core.publisher.Mono;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.LifecycleGuard;
import dev.tether.testsupport.LifecycleGuard.Launch;

/** Real child processes wrapped in {@link ChildProcess} by hand, for tests that drive the ladder themselves. */
final class RealChildren {

    static final int STDERR_TAIL = 8192;

    private RealChildren() {
    }

    /** Starts {@code launch} with a real {@link ProcessBuilder}; the guard checks after the test that it is gone. */
    static ChildProcess start(LifecycleGuard guard, Launch launch, Optional<String> containerName,
            Function<ChildProcess, Mono<TeardownReport>> teardown) {
        try {
            Process process = new ProcessBuilder(launch.argv()).start();
            guard.watch(process.pid());
            ChildSpec spec = ChildSpec.of("test-" + process.pid(), launch.argv());
            return new ChildProcess(containerName.map(name -> spec.withArgv(spec.argv(), name)).orElse(spec), process,
                    STDERR_TAIL, ProcessProperties.defaults().stdoutBound(), teardown);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    static ChildProcess start(LifecycleGuard guard, Launch launch, Function<ChildProcess, Mono<TeardownReport>> teardown) {
        return start(guard, launch, Optional.empty(), teardown);
    }

    /** A teardown for children whose test climbs the ladder itself: releasing them is a test bug. */
    static Mono<TeardownReport> notReleased(ChildProcess child) {
        return Mono.error(new AssertionError(child + " was released, but this test climbs the ladder itself"));
    }

    /**
     * Waits until node process {@code pid} idles in its event loop (Linux: its main thread waits in
     * {@code epoll_wait}), i.e. its script has run and its signal handlers are installed. A node process signalled
     * while it still boots dies of the default action instead of doing what its flags say. ({@code SigCgt} cannot
     * tell: node catches SIGTERM from its first instant, only to re-raise it.)
     */
    static void awaitIdleInEventLoop(long pid) {
        Path wchan = Path.of("/proc", Long.toString(pid), "wchan");
        if (!Files.exists(wchan)) {
            Await.pause(Duration.ofSeconds(1)); // no /proc: give node time to boot
            return;
        }
        Await.until(() -> read(wchan).contains("epoll"), Duration.ofSeconds(15),
                () -> "pid " + pid + " to idle in its event loop; it waits in " + read(wchan));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        }
        catch (IOException ex) {
            return "(gone)";
        }
    }

    /** Waits until the child has said {@code text} on stderr, e.g. that it ignored EOF or SIGTERM. */
    static void awaitStderr(ChildProcess child, String text) {
        Await.until(() -> child.stderrTail().contains(text), Duration.ofSeconds(15),
                () -> child + " did not write '" + text + "' to stderr; it wrote: " + child.stderrTail());
    }
}
