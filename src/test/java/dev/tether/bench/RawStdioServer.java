package dev.tether.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/** server-everything in a container of its own, spoken to directly: the floor under every Tether figure. */
final class RawStdioServer implements AutoCloseable {

    private static final Pattern ID = Pattern.compile("\"id\":(\\d+)[,}]");

    private final Process process;
    private final OutputStream in;
    private final BufferedReader out;
    private final Map<Integer, CompletableFuture<Void>> waiting = new ConcurrentHashMap<>();
    private @Nullable Thread reader;
    private int ids;

    private RawStdioServer(Process process) {
        this.process = process;
        this.in = process.getOutputStream();
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    static RawStdioServer start(List<String> command) throws IOException {
        RawStdioServer raw = new RawStdioServer(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start());
        raw.call("initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"hotpath-bench\",\"version\":\"1\"}}");
        raw.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        return raw;
    }

    Latencies measure(String method, String params, int samples) throws IOException {
        for (int i = 0; i < Math.max(50, samples / 5); i++) {
            call(method, params);
        }
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            long start = System.nanoTime();
            call(method, params);
            micros.add((System.nanoTime() - start) / 1_000);
        }
        return Latencies.of(micros);
    }

    /**
     * {@code workers} threads calling back to back over this one stdio for {@code length}, each waiting for its own answer
     * (a reader thread hands each answer to its caller by id): what the server and {@code docker run}'s relay can do
     * with no gateway in front, the ceiling of every gateway's figure at that many clients. Latencies in microseconds.
     * From the first such run on, the reader thread owns the server's stdout: {@link #measure} is for before it.
     */
    List<Long> measureConcurrent(String method, String params, int workers, Duration length) throws Exception {
        if (reader == null) {
            reader = new Thread(this::dispatchAnswers, "raw-stdio-reader");
            reader.setDaemon(true);
            reader.start();
        }
        AtomicInteger nextId = new AtomicInteger(ids);
        List<Long> micros = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Exception> failed = new AtomicReference<>();
        long deadline = System.nanoTime() + length.toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            Thread worker = new Thread(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        int id = nextId.incrementAndGet();
                        CompletableFuture<Void> answered = new CompletableFuture<>();
                        waiting.put(id, answered);
                        long start = System.nanoTime();
                        synchronized (in) {
                            write("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}");
                        }
                        answered.get(30, TimeUnit.SECONDS);
                        micros.add((System.nanoTime() - start) / 1_000);
                    }
                }
                catch (Exception failure) {
                    failed.compareAndSet(null, failure);
                }
            });
            threads.add(worker);
            worker.start();
        }
        for (Thread worker : threads) {
            worker.join();
        }
        ids = nextId.get();
        if (failed.get() != null) {
            throw new IllegalStateException("a raw call failed: the figures would be of fewer callers than asked", failed.get());
        }
        return micros;
    }

    private void dispatchAnswers() {
        try {
            String line;
            while ((line = out.readLine()) != null) {
                Matcher id = ID.matcher(line);
                CompletableFuture<Void> answered = id.find() ? waiting.remove(Integer.parseInt(id.group(1))) : null;
                if (answered != null) {
                    answered.complete(null);
                }
            }
        }
        catch (IOException closed) {
            // the stream ends with the benchmark
        }
        waiting.values().forEach(call -> call.completeExceptionally(new IOException("server-everything closed its stdout")));
    }

    /** Sends a request and reads lines until its answer; notifications in between are skipped. */
    private void call(String method, String params) throws IOException {
        int id = ++ids;
        write("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}");
        String marker = "\"id\":" + id + ",";
        String markerEnd = "\"id\":" + id + "}";
        String line;
        while ((line = out.readLine()) != null) {
            if (line.contains(marker) || line.contains(markerEnd)) {
                return;
            }
        }
        throw new IOException("server-everything closed its stdout");
    }

    private void write(String line) throws IOException {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    @Override
    public void close() throws InterruptedException {
        try {
            in.close();
        }
        catch (IOException ignored) {
            // gone already
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
