package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.daemon.HealthProbes;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;
import dev.tether.store.leases.InstanceLeases.Lease;
import dev.tether.store.leases.InstanceLeases;

/**
 * A replica's graceful stop over the lease table (H2 in memory, migrated as the daemon's), in virtual time: readiness
 * goes down at once, the lease is marked draining in the store before this replica gives its connections up, the
 * drain lasts the delay and no longer when nothing arrives, as long as requests other than probes arrive (real HTTP
 * requests through {@link DrainTraffic} on Reactor Netty) and no longer than its limit, every answer during it closes
 * its connection, and the lease stays alive, renewed with its mark, until it is given back.
 */
class GracefulDrainTest {

    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final Duration DELAY = Duration.ofSeconds(2);
    private static final Duration LIMIT = Duration.ofSeconds(15);

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    private final DrainTraffic traffic = new DrainTraffic(new HealthProbes(new StandardEnvironment()), clock);
    private @Nullable DisposableServer server;

    @AfterEach
    void stopClock() {
        clock.dispose();
        if (server != null) {
            server.disposeNow();
        }
    }

    @Test
    void aDrainMarksTheLeaseThenGivesUpOwnershipAndLastsTheDelay() {
        InstanceLeases leases = ConnectionOwnersTest.migratedLeases();
        ReplicaProperties properties = new ReplicaProperties(null, null, "127.0.0.1:4001", null, DELAY, null, null, null);
        ReplicaLease lease = new ReplicaLease(leases, "inst-a", properties, true, clock);
        ConnectionOwners owners = new ConnectionOwners(leases, "inst-a", properties, true, clock);
        ConnectionOwners peer = new ConnectionOwners(leases, "inst-b", properties, true, clock);
        Instant now = Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS));
        leases.renew(new Lease("inst-b", "127.0.0.1:4002", now, now.plusSeconds(60))).block(BOUND);
        lease.renew().block(BOUND);
        owners.refresh().block(BOUND);
        ConnectionKey ofA = ownedBy("inst-a");
        assertThat(lease.holds()).isTrue();
        assertThat(owners.remoteOwner(ofA)).isEmpty();
        GracefulDrain drain = new GracefulDrain(lease, owners, traffic, DELAY, LIMIT, true, clock);

        StepVerifier.withVirtualTime(drain::drain, () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> {
                    assertThat(lease.holds()).as("ready no more").isFalse();
                    assertThat(liveDraining(leases, "inst-a")).as("the store has the mark").isTrue();
                    assertThat(owners.leaving()).isTrue();
                    assertThat(owners.remoteOwner(ofA).map(ConnectionOwners.Peer::instance)).contains("inst-b");
                    assertThat(peer.remoteOwnerAfresh(ofA).block(BOUND)).as("the peer takes a's connection over").isEmpty();
                })
                .expectNoEvent(DELAY.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectComplete()
                .verify(BOUND);

        clock.advanceTimeBy(Duration.ofSeconds(30));
        lease.renew().block(BOUND);
        assertThat(liveDraining(leases, "inst-a")).as("renewed, still alive and still draining").isTrue();
        assertThat(leases.expired(Instant.ofEpochMilli(clock.now(TimeUnit.MILLISECONDS))).collectList().block(BOUND))
                .as("nothing for a peer to reap while a drains").isEmpty();
        assertThat(lease.holds()).isFalse();
    }

    @Test
    void onAStoreNoOtherReplicaSharesThereIsNothingToDrain() {
        InstanceLeases leases = ConnectionOwnersTest.migratedLeases();
        ReplicaProperties properties = new ReplicaProperties(null, null, "127.0.0.1:4001", null, DELAY, null, null, null);
        ReplicaLease lease = new ReplicaLease(leases, "solo0001", properties, false, clock);
        ConnectionOwners owners = new ConnectionOwners(leases, "solo0001", properties, false, clock);
        StepVerifier.withVirtualTime(() -> new GracefulDrain(lease, owners, traffic, DELAY, LIMIT, false, clock).drain(), () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .expectComplete()
                .verify(BOUND);
        assertThat(owners.leaving()).isFalse();
        assertThat(lease.holds()).isTrue();
    }

    @Test
    void requestsThatStillArriveKeepTheReplicaListeningAndEveryAnswerClosesItsConnection() throws IOException {
        int port = serve();
        GracefulDrain drain = drainOfALeaseHolder();
        try (Socket before = connect(port)) {
            assertThat(get(before, "/api/tools")).as("kept alive before the drain").doesNotContainKey("connection");

            StepVerifier.withVirtualTime(drain::drain, () -> clock, Long.MAX_VALUE)
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(1500))
                    .then(() -> {
                        assertThat(get(before, "/api/tools")).as("a kept-alive connection's next answer")
                                .containsEntry("connection", "close");
                        assertThat(closedByServer(before)).as("closed by the replica after its answer").isTrue();
                        assertThat(getOnce(port, "/actuator/health/readiness")).containsEntry("connection", "close");
                    })
                    // The request at 1.5 s holds the drain open until 3.5 s; the probe did not.
                    .expectNoEvent(Duration.ofMillis(1999))
                    .then(() -> {
                        getOnce(port, "/api/tools");
                    })
                    .expectNoEvent(DELAY.minusMillis(1))
                    .then(() -> {
                        getOnce(port, "/actuator/health/readiness");
                    })
                    .thenAwait(Duration.ofMillis(1))
                    .expectComplete()
                    .verify(BOUND);
        }
    }

    @Test
    void aBalancerThatNeverStopsSendingIsOutwaitedForTheLimitOnly() throws IOException {
        int port = serve();
        GracefulDrain drain = drainOfALeaseHolder();
        StepVerifier.withVirtualTime(drain::drain, () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> {
                    for (long at = 0; at < LIMIT.toMillis(); at += 1000) {
                        clock.advanceTimeBy(Duration.ofSeconds(1));
                        getOnce(port, "/api/tools");
                    }
                })
                .expectComplete()
                .verify(BOUND);
        assertThat(clock.now(TimeUnit.MILLISECONDS)).as("drained at the limit").isEqualTo(LIMIT.toMillis());
    }

    /** A drain of a replica that holds its lease, beside a live peer. */
    private GracefulDrain drainOfALeaseHolder() {
        InstanceLeases leases = ConnectionOwnersTest.migratedLeases();
        ReplicaProperties properties = new ReplicaProperties(null, null, "127.0.0.1:4001", null, DELAY, null, null, null);
        ReplicaLease lease = new ReplicaLease(leases, "inst-a", properties, true, clock);
        ConnectionOwners owners = new ConnectionOwners(leases, "inst-a", properties, true, clock);
        lease.renew().block(BOUND);
        return new GracefulDrain(lease, owners, traffic, DELAY, LIMIT, true, clock);
    }

    /** Reactor Netty on a loopback port, every request answered {@code ok} through {@link #traffic}. */
    private int serve() {
        HttpHandler handler = WebHttpHandlerBuilder.webHandler(exchange -> {
            DataBuffer ok = exchange.getResponse().bufferFactory().wrap("ok".getBytes(StandardCharsets.US_ASCII));
            return exchange.getResponse().writeWith(Mono.just(ok));
        }).filter(traffic).codecConfigurer(ServerCodecConfigurer.create()).build(); // created here: it reads a file
        server = HttpServer.create().host("127.0.0.1").port(0).handle(new ReactorHttpHandlerAdapter(handler)).bindNow(BOUND);
        return server.port();
    }

    /** Sends a GET on a connection of its own; returns its answer's headers. */
    private static Map<String, String> getOnce(int port, String path) {
        try (Socket socket = connect(port)) {
            return get(socket, path);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static Socket connect(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout((int) BOUND.toMillis());
        return socket;
    }

    /** Sends a kept-alive GET on {@code socket} and reads its answer: the header names in lower case, and their values. */
    private static Map<String, String> get(Socket socket, String path) {
        try {
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            assertThat(line(in)).startsWith("HTTP/1.1 200");
            Map<String, String> headers = new HashMap<>();
            for (String header = line(in); !header.isEmpty(); header = line(in)) {
                int colon = header.indexOf(':');
                headers.put(header.substring(0, colon).strip().toLowerCase(Locale.ROOT), header.substring(colon + 1).strip());
            }
            assertThat(in.readNBytes(Integer.parseInt(headers.get("content-length")))).asString(StandardCharsets.US_ASCII).isEqualTo("ok");
            return headers;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
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

    private static boolean closedByServer(Socket socket) {
        try {
            return socket.getInputStream().read() == -1;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static boolean liveDraining(InstanceLeases leases, String instance) {
        return Boolean.TRUE.equals(leases.standing().filter(lease -> lease.instance().equals(instance))
                .map(Lease::draining).blockFirst(BOUND));
    }

    private static ConnectionKey ownedBy(String instance) {
        return IntStream.range(0, 1000).mapToObj(i -> ConnectionKey.org("server" + i, "default"))
                .filter(key -> ConnectionOwners.owner(key.toString(), List.of("inst-a", "inst-b")).equals(instance))
                .findFirst().orElseThrow();
    }
}
