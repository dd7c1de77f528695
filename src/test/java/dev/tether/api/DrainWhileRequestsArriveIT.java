package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.testsupport.Await;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/**
 * What a load balancer sees of a replica that got SIGTERM while the balancer still sends it work (its health checks
 * have not noticed yet): a packaged daemon on PostgreSQL, a connection a balancer keeps alive to it, and clients that
 * send requests to it without pause, each on a connection of its own, from before the signal until three times its
 * drain delay after the replica began to drain. Every request is answered 200 with {@code Connection: close}, the kept-alive connection is closed by the
 * replica right after its next answer (so the balancer never sends a request on a connection the replica is closing),
 * and the replica exits once the requests stop. A replica that stopped listening when its drain delay ran out, whatever
 * still arrived, refused the requests after it, and closed the kept-alive connection under the balancer's feet, which
 * HAProxy answers 502 for a request sent on it.
 */
@RequiresPostgres
class DrainWhileRequestsArriveIT {

    private static final String TOKEN = "drain-it-" + UUID.randomUUID();
    private static final int CLIENTS = 4;
    private static final Duration DRAIN_DELAY = Duration.ofSeconds(2);
    /** How long a step may take before the test calls it stuck: no speed is judged by it. */
    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private PackagedDaemon daemon;

    @AfterEach
    void stop() throws InterruptedException {
        if (daemon != null) {
            daemon.close();
            try (var lines = Files.lines(daemon.log())) {
                lines.filter(line -> line.contains("stopping") || line.contains("hutdown")).forEach(line -> System.out.println("[drain] " + line));
            }
            catch (IOException unreadable) {
                System.out.println("[drain] cannot read " + daemon.log() + ": " + unreadable);
            }
        }
    }

    @Test
    void aStoppingReplicaServesWhatStillArrivesAndClosesEachConnectionAfterItsAnswer() throws Exception {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        daemon = PackagedDaemon.startOn(Fixture.freeLoopbackPort(), PackagedDaemon.jarOrSkip(), dir.resolve("data"), List.of(
                "--tether.api.token=" + TOKEN, "--tether.replicas.address=127.0.0.1", "--tether.replicas.heartbeat=1s",
                "--tether.replicas.lease-ttl=6s", "--tether.replicas.drain-delay=" + DRAIN_DELAY.toSeconds() + "s"),
                postgres.daemonEnvironment(postgres.createSchema("drainarrive")));
        TetherClient client = new TetherClient(daemon.port(), TOKEN);
        try (Socket keptAlive = new Socket("127.0.0.1", daemon.port())) {
            keptAlive.setSoTimeout((int) BOUND.toMillis());
            assertThat(get(keptAlive)).as("kept alive before the stop").doesNotContain("connection: close");

            AtomicLong answered = new AtomicLong();
            AtomicLong closing = new AtomicLong();
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean sending = new AtomicBoolean(true);
            Mono<Void> load = Flux.range(0, CLIENTS)
                    .flatMap(each -> Flux.range(0, Integer.MAX_VALUE)
                            .takeWhile(turn -> sending.get())
                            .concatMap(turn -> client.exchange(HttpMethod.GET, "/api/tools", null)
                                    .timeout(BOUND)
                                    .doOnNext(reply -> {
                                        if (reply.status() != 200) {
                                            failures.add(reply.toString());
                                        }
                                        else if ("close".equals(reply.headers().getFirst(HttpHeaders.CONNECTION))) {
                                            closing.incrementAndGet();
                                        }
                                        else {
                                            answered.incrementAndGet();
                                        }
                                    })
                                    .onErrorResume(error -> {
                                        failures.add(error.toString());
                                        return Mono.empty();
                                    })), CLIENTS)
                    .then()
                    .cache();
            load.subscribe();
            Await.until(() -> answered.get() >= 10, BOUND, () -> "the clients send");
            CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(this::terminate);
            Await.until(() -> closing.get() > 0, BOUND, () -> "the replica drains");
            Mono.delay(DRAIN_DELAY.multipliedBy(3)).subscribe(late -> sending.set(false));
            load.block(BOUND);

            List<String> kept = get(keptAlive);
            assertThat(kept).as("the kept-alive connection's answer after the stop").contains("connection: close");
            assertThat(keptAlive.getInputStream().read()).as("closed by the replica after its answer").isEqualTo(-1);
            assertThat(exit.get()).as("exit status after SIGTERM").isIn(0, 143);
            System.out.printf("[drain] %d requests answered with Connection: close while the replica stopped, %d failed: %s%n",
                    closing.get(), failures.size(), failures.stream().limit(5).toList());
            assertThat(failures).as("requests that failed while the replica stopped").isEmpty();
        }
    }

    private int terminate() {
        try {
            return daemon.terminate(BOUND);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** A kept-alive GET of /api/tools on {@code socket}: its status line and headers, in lower case. */
    private static List<String> get(Socket socket) throws IOException {
        socket.getOutputStream().write(("GET /api/tools HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        InputStream in = socket.getInputStream();
        List<String> head = new ArrayList<>();
        for (String line = line(in); !line.isEmpty(); line = line(in)) {
            head.add(line.toLowerCase(Locale.ROOT));
        }
        assertThat(head.get(0)).startsWith("http/1.1 200");
        if (head.contains("transfer-encoding: chunked")) {
            for (int size = Integer.parseInt(line(in).strip(), 16); size > 0; size = Integer.parseInt(line(in).strip(), 16)) {
                in.readNBytes(size + 2);
            }
            line(in);
        }
        else {
            in.readNBytes(head.stream().filter(line -> line.startsWith("content-length:"))
                    .map(line -> Integer.parseInt(line.substring("content-length:".length()).strip())).findFirst().orElseThrow());
        }
        return head;
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            assertThat(c).as("the answer goes on").isNotNegative();
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }
}
