package dev.tether.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The three pipes of a {@link ChildProcess}, each pumped by a daemon thread of its own: stdout read into lines (bounded,
 * so a flooding server fails instead of growing the heap), stderr drained into a tail (a full pipe would block the
 * child), and stdin written from a queue (a full pipe blocks that thread, never the caller's event loop).
 */
final class ChildPipes {

    /** The writer thread's end-of-input marker; compared by identity. */
    private static final String CLOSE = new String("close");

    private final ChildProcess child;
    private final OutputStream stdin;
    private final Sinks.Many<String> stdoutLines = Sinks.many().unicast().onBackpressureBuffer();
    private final StdoutBound stdoutBound;
    private final AtomicLong bufferedLines = new AtomicLong();
    private final AtomicLong bufferedBytes = new AtomicLong();
    private final LinkedBlockingQueue<String> stdinLines = new LinkedBlockingQueue<>();
    private volatile @Nullable IOException stdinFailure;
    private final Sinks.One<Boolean> overflowed = Sinks.one();
    private volatile @Nullable ChildOutputOverflowException overflowError;
    private final StderrTail stderr;
    private final Sinks.Empty<Void> stderrClosed = Sinks.empty();

    /**
     * How much of its stdout a child may have written ahead of the reader: a server that floods stdout faster
     * than it is read (or writes one endless line) fails its session instead of growing the heap.
     */
    record StdoutBound(long lines, long bytes) {
    }

    /** Starts pumping the pipes of {@code process}; an overflow releases {@code child}. */
    ChildPipes(ChildProcess child, Process process, int stderrTailBytes, StdoutBound stdoutBound) {
        this.child = child;
        this.stdin = process.getOutputStream();
        this.stdoutBound = stdoutBound;
        this.stderr = new StderrTail(stderrTailBytes);
        String id = child.id();
        startDaemon("tether-stdout-" + id, () -> readLines(process.getInputStream()));
        startDaemon("tether-stderr-" + id, () -> drain(process.getErrorStream()));
        startDaemon("tether-stdin-" + id, this::writeLines);
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
        return Mono.fromRunnable(() -> write(line));
    }

    /** As {@link #send}, now, on the caller's thread. */
    public void write(String line) {
        IOException failed = stdinFailure;
        if (failed != null) {
            throw new ChildStdinClosedException(child, failed);
        }
        stdinLines.add(line);
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
        overflowError = new ChildOutputOverflowException(child, what);
        overflowed.tryEmitValue(true);
        child.release("stdout overflowed");
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
}
