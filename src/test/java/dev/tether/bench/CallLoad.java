package dev.tether.bench;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * Clients calling {@code POST /api/tools/call} back to back for a while over one keep-alive client: the calls per
 * second they got through, the latencies of those that succeeded, and the errors (a status other than 200, or a
 * tool's error).
 */
record CallLoad(double rate, Latencies latencies, int errors) {

    /** {@code clients} threads for {@code length}; client {@code c} sends {@code bodyOf.apply(c)} every time. */
    static CallLoad run(BenchClient client, int clients, Duration length, IntFunction<byte[]> bodyOf) throws InterruptedException {
        return requests(client, clients, length, c -> {
            byte[] payload = bodyOf.apply(c);
            return () -> client.request("/api/tools/call").POST(HttpRequest.BodyPublishers.ofByteArray(payload)).build();
        });
    }

    /**
     * {@code clients} threads for {@code length}, client {@code c} sending what {@code requestsOf.apply(c)} makes, back to
     * back (made once per client, before the clock starts: an MCP session's handshake, say).
     */
    static CallLoad requests(BenchClient client, int clients, Duration length, IntFunction<java.util.function.Supplier<HttpRequest>> requestsOf)
            throws InterruptedException {
        ConcurrentLinkedQueue<Long> micros = new ConcurrentLinkedQueue<>();
        AtomicInteger errors = new AtomicInteger();
        long deadline = System.nanoTime() + length.toNanos();
        CountDownLatch done = new CountDownLatch(clients);
        long began = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            java.util.function.Supplier<HttpRequest> requests = requestsOf.apply(c);
            Thread caller = new Thread(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        long start = System.nanoTime();
                        HttpResponse<String> response = client.http().send(requests.get(), HttpResponse.BodyHandlers.ofString());
                        if (response.statusCode() == 200 && !response.body().contains("\"isError\":true")) {
                            micros.add((System.nanoTime() - start) / 1_000);
                        }
                        else {
                            errors.incrementAndGet();
                        }
                    }
                }
                catch (Exception ex) {
                    errors.incrementAndGet();
                }
                finally {
                    done.countDown();
                }
            });
            caller.setDaemon(true);
            caller.start();
        }
        done.await();
        double took = (System.nanoTime() - began) / 1e9;
        return new CallLoad(micros.size() / took, Latencies.of(new ArrayList<>(micros)), errors.get());
    }
}
