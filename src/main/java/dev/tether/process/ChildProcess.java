package dev.tether.process;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
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
    private final ChildPipes pipes;
    private final Function<ChildProcess, Mono<TeardownReport>> teardownAction;
    private final AtomicBoolean teardownStarted = new AtomicBoolean();
    private final Sinks.One<TeardownReport> teardown = Sinks.one();
    private volatile String teardownReason = "disposed";

    ChildProcess(ChildSpec spec, Process process, int stderrTailBytes, ChildPipes.StdoutBound stdoutBound,
            Function<ChildProcess, Mono<TeardownReport>> teardownAction) {
        this.spec = spec;
        this.process = process;
        this.teardownAction = teardownAction;
        this.pipes = new ChildPipes(this, process, stderrTailBytes, stdoutBound);
    }

    public String id() {
        return spec.id();
    }

    public long pid() {
        return process.pid();
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
        return pipes.stdout();
    }

    /**
     * Queues one line for the child's stdin, written in order by the child's own writer thread. Fails with
     * {@link ChildStdinClosedException} once a write has failed.
     */
    public Mono<Void> send(String line) {
        return pipes.send(line);
    }

    /** As {@link #send}, at once: queues the line now, on the caller's thread, or throws {@link ChildStdinClosedException}. */
    public void write(String line) {
        pipes.write(line);
    }

    /** The most recent stderr output, for error messages. */
    public String stderrTail() {
        return pipes.stderrTail();
    }

    /**
     * Completes when the child's stderr has ended, i.e. {@link #stderrTail()} holds its last words. A child's exit
     * can be seen before what it wrote just before exiting has been drained; a grandchild may keep stderr open.
     */
    public Mono<Void> stderrClosed() {
        return pipes.stderrClosed();
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
            throw Exceptions.propagate(Objects.requireNonNull(ex.getCause()));
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
        pipes.closeStdin();
    }

    @Override
    public String toString() {
        return "child " + id() + " (pid " + pid() + ")";
    }
}
