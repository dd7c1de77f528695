package dev.tether.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A live stdio child. Only {@link ChildProcesses#using} creates one, and the pipeline that asked for it owns
 * it: when that pipeline completes, fails or is cancelled, the child is torn down. Code that merely holds a
 * handle never needs to dispose it, but may end it early with {@link #dispose()}.
 */
public final class ChildProcess implements Disposable {

    private final ChildSpec spec;
    private final Process process;
    private final Instant startedAt;
    private final OutputStream stdin;
    /** The writer thread's end-of-input marker; compared by identity. */
    private static final String CLOSE = new String("close");

    private final Sinks.Many<String> stdoutLines = Sinks.many().unicast().onBackpressureBuffer();
    private final StdoutBound stdoutBound;
    private final AtomicLong bufferedLines = new AtomicLong();
    private final AtomicLong bufferedBytes = new AtomicLong();
    private final LinkedBlockingQueue<String> stdinLines = new LinkedBlockingQueue<>();
    private volatile IOException stdinFailure;
    private final Sinks.One<Boolean> overflowed = Sinks.one();
    private volatile ChildOutputOverflowException overflowError;
    private final StderrTail stderr;
    private final Sinks.Empty<Void> stderrClosed = Sinks.empty();
    private final Function<ChildProcess, Mono<TeardownReport>> teardownAction;
    private final AtomicBoolean teardownStarted = new AtomicBoolean();
    private final Sinks.One<TeardownReport> teardown = Sinks.one();
    private volatile String teardownReason = "disposed";

    /**
     * How much of its stdout a child may have written ahead of the reader: a server that floods stdout faster
     * than it is read (or writes one endless line) fails its session instead of growing the heap.
     */
    record StdoutBound(long lines, long bytes) {
    }

    ChildProcess(ChildSpec spec, Process process, int stderrTailBytes, StdoutBound stdoutBound,
            Function<ChildProcess, Mono<TeardownReport>> teardownAction) {
        this.spec = spec;
        this.stdoutBound = stdoutBound;
        this.process = process;
        this.startedAt = process.toHandle().info().startInstant().orElseGet(Instant::now);
        this.stdin = process.getOutputStream();
        this.stderr = new StderrTail(stderrTailBytes);
        this.teardownAction = teardownAction;
        startDaemon("tether-stdout-" + spec.id(), () -> readLines(process.getInputStream()));
        startDaemon("tether-stderr-" + spec.id(), () -> drain(process.getErrorStream()));
        startDaemon("tether-stdin-" + spec.id(), this::writeLines);
    }

    public String id() {
        return spec.id();
    }

    public long pid() {
        return process.pid();
    }

    public Instant startedAt() {
        return startedAt;
    }

    public ChildSpec spec() {
        return spec;
    }

    public Optional<String> containerName() {
        return spec.containerName();
    }

    /**
     * Lines the child writes to stdout, completing when it closes stdout. One subscriber only. Fails with
     * {@link ChildOutputOverflowException}, and the child is torn down, when the child writes more than the
     * bound ahead of this subscriber.
     */
    public Flux<String> stdout() {
        return stdoutLines.asFlux()
                .doOnNext(line -> {
                    bufferedLines.decrementAndGet();
                    bufferedBytes.addAndGet(-line.length());
                })
                // The overflow overtakes the buffered lines: a reader that has stopped reading must hear of it too.
                .takeUntilOther(overflowed.asMono())
                .concatWith(Mono.defer(() -> overflowError == null ? Mono.empty() : Mono.error(overflowError)));
    }

    /**
     * Queues one line for the child's stdin. The child's own writer thread writes it, in order: a full pipe
     * blocks that thread, never the caller's (often a Netty event loop), and no scheduler hop is paid per
     * message. Fails with {@link ChildStdinClosedException} once a write has failed.
     */
    public Mono<Void> send(String line) {
        return Mono.fromRunnable(() -> {
            IOException failed = stdinFailure;
            if (failed != null) {
                throw new ChildStdinClosedException(this, failed);
            }
            stdinLines.add(line);
        });
    }

    /** The most recent stderr output, for error messages. */
    public String stderrTail() {
        return stderr.text();
    }

    /**
     * Completes when the child's stderr has ended, i.e. {@link #stderrTail()} holds its last words. A child's exit
     * can be seen before what it wrote just before exiting has been drained; a grandchild may keep stderr open.
     */
    public Mono<Void> stderrClosed() {
        return stderrClosed.asMono();
    }

    /** Emits the exit code once the child has exited. */
    public Mono<Integer> onExit() {
        return Mono.fromFuture(process.onExit(), true).map(Process::exitValue);
    }

    public Optional<Integer> exitCode() {
        return process.isAlive() ? Optional.empty() : Optional.of(process.exitValue());
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Starts the teardown ladder, once; returns at once. */
    @Override
    public void dispose() {
        release("disposed");
    }

    @Override
    public boolean isDisposed() {
        return teardownStarted.get();
    }

    /**
     * Starts the teardown ladder if it has not started, and completes when the tree is gone and the
     * container removed. Cancelling the returned Mono stops waiting, not the teardown.
     */
    public Mono<TeardownReport> disposeLater() {
        release("disposed");
        return teardown.asMono();
    }

    /** Blocks until torn down; for shutdown and tests only. Fails, naming the child, when that outlasts the timeout. */
    public TeardownReport disposeNow(Duration timeout) {
        try {
            // Not block(timeout): its timeout throws a message that names neither the child nor what was awaited.
            return disposeLater().toFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            throw new IllegalStateException("child " + id() + " (pid " + pid() + ") was not torn down within " + timeout);
        }
        catch (ExecutionException ex) {
            throw Exceptions.propagate(ex.getCause());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + this + " to be torn down", ex);
        }
    }

    /** Completes when the teardown started by anyone has finished. */
    public Mono<TeardownReport> onDispose() {
        return teardown.asMono();
    }

    void release(String reason) {
        if (teardownStarted.compareAndSet(false, true)) {
            teardownReason = reason;
            // Detached on purpose: the subscriber that triggered the release may be cancelled, the teardown may not.
            teardownAction.apply(this).subscribe(teardown::tryEmitValue, teardown::tryEmitError);
        }
    }

    String teardownReason() {
        return teardownReason;
    }

    /** The child and every descendant alive now. Taken before signalling: an orphan is out of reach later. */
    List<ProcessHandle> tree() {
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(process.toHandle());
        process.descendants().forEach(tree::add);
        return tree;
    }

    void closeStdin() {
        stdinLines.add(CLOSE);
        try {
            stdin.close();
        }
        catch (IOException ignored) {
            // The child is gone or closed its end: either way stdin is closed.
        }
    }

    private void writeLines() {
        try {
            String line;
            while ((line = stdinLines.take()) != CLOSE) {
                stdin.write(line.getBytes(StandardCharsets.UTF_8));
                stdin.write('\n');
                if (stdinLines.isEmpty()) {
                    stdin.flush();
                }
            }
        }
        catch (IOException ex) {
            stdinFailure = ex;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        stdinLines.clear();
    }

    private void readLines(InputStream out) {
        byte[] chunk = new byte[16384];
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        try (out) {
            int read;
            while ((read = out.read(chunk)) >= 0) {
                int start = 0;
                for (int i = 0; i < read; i++) {
                    if (chunk[i] == '\n') {
                        line.write(chunk, start, i - start);
                        start = i + 1;
                        if (!emit(line)) {
                            return;
                        }
                    }
                }
                line.write(chunk, start, read - start);
                if (line.size() > stdoutBound.bytes()) {
                    overflow("a line longer than " + stdoutBound.bytes() + " bytes");
                    return;
                }
            }
        }
        catch (IOException ignored) {
            // Closed under us during teardown: the stream has ended either way.
        }
        stdoutLines.tryEmitComplete();
    }

    /** Hands a complete line to the reader; false when that overflowed the bound. */
    private boolean emit(ByteArrayOutputStream line) {
        int size = line.size();
        String text = line.toString(StandardCharsets.UTF_8);
        line.reset();
        if (bufferedLines.incrementAndGet() > stdoutBound.lines() || bufferedBytes.addAndGet(text.length()) > stdoutBound.bytes()
                || size > stdoutBound.bytes()) {
            overflow("more than " + stdoutBound.lines() + " lines or " + stdoutBound.bytes() + " bytes not yet read");
            return false;
        }
        stdoutLines.tryEmitNext(text);
        return true;
    }

    private void overflow(String what) {
        overflowError = new ChildOutputOverflowException(this, what);
        overflowed.tryEmitValue(true);
        release("stdout overflowed");
    }

    private void drain(InputStream err) {
        byte[] buffer = new byte[4096];
        try (err) {
            int read;
            while ((read = err.read(buffer)) >= 0) {
                stderr.append(buffer, read);
            }
        }
        catch (IOException ignored) {
            // Closed under us during teardown.
        }
        stderrClosed.tryEmitEmpty();
    }

    private static void startDaemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public String toString() {
        return "child " + id() + " (pid " + pid() + ")";
    }
}
