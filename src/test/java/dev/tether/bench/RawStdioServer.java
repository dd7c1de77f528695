package dev.tether.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** server-everything in a container of its own, spoken to directly: the floor under every Tether figure. */
final class RawStdioServer implements AutoCloseable {

    private final Process process;
    private final OutputStream in;
    private final BufferedReader out;
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
