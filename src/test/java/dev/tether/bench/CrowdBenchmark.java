package dev.tether.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.PrometheusScrape;

/**
 * A crowd against the packaged daemon ({@code bin/tether}, its own JVM flags), from one client process that drives
 * every socket from one selector thread:
 * <ol>
 * <li><b>the crowd</b>: {@code connections} kept-alive connections, opened with at most {@code opening} connects in
 * flight, each sending {@code GET path} as soon as it is up; then, with all of them open and idle, the daemon's
 * resident memory and open files beside the same figures before the crowd; then a second request on every connection
 * at once. Every answer is counted by its outcome: {@code 200}, shed ({@code 503}/{@code 429} with
 * {@code Retry-After}), anything else, and connections the server closed or reset without an answer;</li>
 * <li><b>slowloris</b>: {@code slow} sockets that send half a request head and nothing more, and while they are open,
 * {@code ordinary} requests at once on fresh connections: their outcomes, and how long they took beside the same
 * requests with no slow socket open, in the same run.</li>
 * </ol>
 * It prints figures; it asserts nothing. Run it with {@code bench/crowd.sh}, which raises {@code ulimit -n} for the
 * client and the daemon it starts.
 *
 * <p>The request is {@code GET /api/integrations} with the token by default, an ordinary route (health probes are never
 * shed, so they would show nothing of it). Arguments: {@code connections=10000 opening=500 slow=1000 ordinary=50
 * path=/api/integrations settle=5} and any
 * {@code --tether.*} setting for the daemon.
 */
public final class CrowdBenchmark {

    private final int connections;
    private final int opening;
    private final int slow;
    private final int ordinary;
    private final String path;
    private final Duration settle;
    private final List<String> settings;

    private CrowdBenchmark(BenchArguments args) {
        connections = args.integer("connections", 10_000);
        opening = args.integer("opening", 500);
        slow = args.integer("slow", 1000);
        ordinary = args.integer("ordinary", 50);
        path = args.text("path", "/api/integrations");
        settle = Duration.ofSeconds(args.integer("settle", 5));
        settings = args.daemonSettings();
    }

    public static void main(String[] argv) throws Exception {
        new CrowdBenchmark(BenchArguments.parse(argv)).run();
        System.exit(0);
    }

    private void run() throws Exception {
        Path jar = PackagedDaemon.jar().orElseThrow(() -> new IllegalStateException("build the jar first: ./mvnw -DskipTests package"));
        Path dataDir = Files.createTempDirectory("tether-bench-crowd");
        System.out.printf("Tether crowd benchmark: %s, %d cores, load %s, client open-files limit %s%n", jar.getFileName(),
                Runtime.getRuntime().availableProcessors(), Files.readString(Path.of("/proc/loadavg")).strip(), openFilesLimit("self"));
        try (PackagedDaemon daemon = PackagedDaemon.start(jar, dataDir, settings, Map.of())) {
            System.out.printf("daemon pid %d (open-files limit %s), settings %s%n", daemon.pid(), openFilesLimit(Long.toString(daemon.pid())),
                    settings.isEmpty() ? "the defaults" : settings);
            Thread.sleep(settle.toMillis());
            Figures before = figures(daemon, true);
            System.out.printf("%-44s %s%n", "before the crowd, after a full collection", before);

            try (Crowd crowd = new Crowd(daemon.port())) {
                long opened = System.nanoTime();
                Outcomes first = crowd.open(connections, opening, request(daemon, path));
                System.out.printf("%-44s %s in %.1f s%n", connections + " connections, first request each", first,
                        (System.nanoTime() - opened) / 1e9);
                Thread.sleep(settle.toMillis());
                Figures held = figures(daemon);
                System.out.printf("%-44s %s%n", crowd.alive() + " connections open, idle", held);
                Figures collected = figures(daemon, true);
                System.out.printf("%-44s %s; %.1f KiB of live heap per connection beside before the crowd's%n",
                        "the same after a full collection", collected, (collected.heapMiB() - before.heapMiB()) * 1024 / crowd.alive());
                System.out.printf("%-44s %+.1f MiB RSS, %+d open files: %.1f KiB and %.2f files per connection%n", "the crowd's cost",
                        held.rssMiB() - before.rssMiB(), held.files() - before.files(),
                        (held.rssMiB() - before.rssMiB()) * 1024 / crowd.alive(), (double) (held.files() - before.files()) / crowd.alive());

                long again = System.nanoTime();
                Outcomes second = crowd.again(request(daemon, path));
                System.out.printf("%-44s %s in %.1f s%n", "a second request on each, all at once", second, (System.nanoTime() - again) / 1e9);
                System.out.printf("%-44s %s%n", "after it", figures(daemon));
            }
            Thread.sleep(settle.toMillis());
            System.out.printf("%-44s %s%n", "crowd closed", figures(daemon));

            try (Crowd quiet = new Crowd(daemon.port())) {
                long started = System.nanoTime();
                Outcomes alone = quiet.open(ordinary, ordinary, request(daemon, path));
                System.out.printf("%-44s %s in %.0f ms%n", ordinary + " ordinary requests, nothing else open", alone,
                        (System.nanoTime() - started) / 1e6);
            }
            try (Crowd slowloris = new Crowd(daemon.port()); Crowd ordinaries = new Crowd(daemon.port())) {
                slowloris.openSilent(slow, opening, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
                System.out.printf("%-44s %s%n", slowloris.alive() + " slowloris sockets open", figures(daemon));
                long started = System.nanoTime();
                Outcomes during = ordinaries.open(ordinary, ordinary, request(daemon, path));
                System.out.printf("%-44s %s in %.0f ms; slowloris sockets still open: %d of %d%n",
                        ordinary + " ordinary requests meanwhile", during, (System.nanoTime() - started) / 1e6,
                        slowloris.stillOpen(), slow);
            }
        }
    }

    private static String request(PackagedDaemon daemon, String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + daemon.port() + "\r\nAuthorization: Bearer " + daemon.token() + "\r\n\r\n";
    }

    /** The daemon's resident memory, open files, and what it says of its connections, requests, buffers and heap. */
    private record Figures(double rssMiB, long files, double connections, double heapMiB, double buffersMiB) {

        @Override
        public String toString() {
            return String.format("RSS %.1f MiB, %d open files, %.0f connections by its count, heap used %.1f MiB, server buffers %.1f MiB",
                    rssMiB, files, connections, heapMiB, buffersMiB);
        }
    }

    private static Figures figures(PackagedDaemon daemon) throws IOException, InterruptedException {
        return figures(daemon, false);
    }

    /** The figures, after a full collection ({@code jcmd GC.run}) when {@code collected}: the heap is then what is live. */
    private static Figures figures(PackagedDaemon daemon, boolean collected) throws IOException, InterruptedException {
        if (collected) {
            StartBenchmark.collect(daemon.pid());
        }
        PrometheusScrape metrics = daemon.metrics();
        long files;
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(daemon.pid()), "fd"))) {
            files = fds.count();
        }
        return new Figures(daemon.residentMiB(), files, metrics.sum("tether_server_connections"),
                metrics.sum("jvm_memory_used_bytes", "area", "heap") / (1 << 20), metrics.sum("tether_server_buffers_bytes") / (1 << 20));
    }

    private static String openFilesLimit(String pid) throws IOException {
        return Files.readAllLines(Path.of("/proc", pid, "limits")).stream().filter(line -> line.startsWith("Max open files"))
                .map(line -> line.replaceAll("Max open files\\s+(\\S+)\\s+(\\S+).*", "$1 soft, $2 hard")).findFirst().orElse("unknown");
    }

    /** How a batch of requests ended, by outcome. */
    private static final class Outcomes {

        private final Map<String, Integer> counts = new TreeMap<>();

        void add(String outcome) {
            counts.merge(outcome, 1, Integer::sum);
        }

        @Override
        public String toString() {
            return counts.toString();
        }
    }

    /** Many sockets to one port, driven by one selector on the calling thread. */
    private static final class Crowd implements AutoCloseable {

        private static final long SILENCE_SECONDS = 60;

        private final int port;
        private final Selector selector = Selector.open();
        private final List<Member> members = new ArrayList<>();
        private long progress = System.nanoTime();

        Crowd(int port) throws IOException {
            this.port = port;
        }

        int alive() {
            return (int) members.stream().filter(member -> member.channel.isOpen()).count();
        }

        /** Opens {@code count} connections, {@code inFlight} connects at a time, each sending {@code request}; waits for every answer. */
        Outcomes open(int count, int inFlight, String request) throws IOException {
            Outcomes outcomes = new Outcomes();
            int started = 0;
            int pending = 0;
            while (started < count || pending > 0) {
                while (started < count && pending < inFlight) {
                    Member member = connect(request);
                    members.add(member);
                    started++;
                    pending++;
                }
                pending -= step(outcomes, pending);
            }
            return outcomes;
        }

        /** A second {@code request} on every connection still open, all written at once; waits for every answer. */
        Outcomes again(String request) throws IOException {
            Outcomes outcomes = new Outcomes();
            int pending = 0;
            for (Member member : members) {
                if (member.channel.isOpen()) {
                    member.send(request);
                    member.channel.register(selector, SelectionKey.OP_READ, member);
                    pending++;
                }
            }
            while (pending > 0) {
                pending -= step(outcomes, pending);
            }
            return outcomes;
        }

        /** Opens {@code count} connections that send {@code text} and nothing more, and expect no answer. */
        void openSilent(int count, int inFlight, String text) throws IOException {
            for (int i = 0; i < count; i++) {
                SocketChannel channel = SocketChannel.open();
                channel.setOption(StandardSocketOptions.SO_LINGER, 0);
                channel.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                channel.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1)));
                members.add(new Member(channel, ""));
            }
        }

        /** Slow sockets the server has not closed: a read that would block, not the end of the stream. */
        int stillOpen() throws IOException {
            int open = 0;
            for (Member member : members) {
                member.channel.configureBlocking(false);
                try {
                    if (member.channel.read(ByteBuffer.allocate(1)) == 0) {
                        open++;
                    }
                }
                catch (IOException reset) {
                    // closed by the server
                }
            }
            return open;
        }

        private Member connect(String request) throws IOException {
            SocketChannel channel = SocketChannel.open();
            channel.configureBlocking(false);
            Member member = new Member(channel, request);
            if (channel.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
                member.send(request);
                channel.register(selector, SelectionKey.OP_READ, member);
            }
            else {
                channel.register(selector, SelectionKey.OP_CONNECT, member);
            }
            return member;
        }

        /**
         * One round of the selector; how many requests it ended. Requests that see nothing for {@value #SILENCE_SECONDS} s
         * all end as unanswered: a finding, not a hang.
         */
        private int step(Outcomes outcomes, int pending) throws IOException {
            selector.select(1000);
            if (selector.selectedKeys().isEmpty() && System.nanoTime() - progress > SILENCE_SECONDS * 1_000_000_000L) {
                for (int i = 0; i < pending; i++) {
                    outcomes.add("no answer within " + SILENCE_SECONDS + " s");
                }
                return pending;
            }
            progress = System.nanoTime();
            int ended = 0;
            for (SelectionKey key : selector.selectedKeys()) {
                Member member = (Member) key.attachment();
                String outcome = member.ready(key);
                if (outcome != null) {
                    outcomes.add(outcome);
                    ended++;
                }
            }
            selector.selectedKeys().clear();
            return ended;
        }

        @Override
        public void close() throws IOException {
            for (Member member : members) {
                member.channel.close();
            }
            selector.close();
        }
    }

    /** One connection of the crowd and the answer it is reading. */
    private static final class Member {

        private final SocketChannel channel;
        private final String request;
        private final ByteBuffer buffer = ByteBuffer.allocate(4096);
        private byte[] answer = new byte[0];

        Member(SocketChannel channel, String request) {
            this.channel = channel;
            this.request = request;
        }

        void send(String text) throws IOException {
            answer = new byte[0];
            ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1));
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }

        /** What the selector found; the request's outcome once it has one, else null. */
        String ready(SelectionKey key) throws IOException {
            if (key.isConnectable()) {
                try {
                    channel.finishConnect();
                }
                catch (IOException refused) {
                    key.cancel();
                    channel.close();
                    return "connect failed (" + refused.getMessage() + ")";
                }
                send(request);
                key.interestOps(SelectionKey.OP_READ);
                return null;
            }
            int read;
            try {
                read = channel.read(buffer.clear());
            }
            catch (IOException reset) {
                key.cancel();
                channel.close();
                return "reset";
            }
            if (read < 0) {
                key.cancel();
                channel.close();
                return "closed without an answer";
            }
            answer = Arrays.copyOf(answer, answer.length + read);
            buffer.flip().get(answer, answer.length - read, read);
            String outcome = outcome(new String(answer, StandardCharsets.ISO_8859_1));
            if (outcome != null) {
                key.interestOps(0);
            }
            return outcome;
        }

        /** The outcome of a whole answer; null while it is not whole. */
        private static String outcome(String text) {
            int end = text.indexOf("\r\n\r\n");
            if (end < 0) {
                return null;
            }
            String head = text.substring(0, end).toLowerCase();
            String body = text.substring(end + 4);
            int length = head.indexOf("content-length:");
            if (length >= 0) {
                int value = Integer.parseInt(head.substring(length + 15).split("\r\n")[0].strip());
                if (body.length() < value) {
                    return null;
                }
            }
            else if (head.contains("transfer-encoding: chunked") && !body.endsWith("0\r\n\r\n")) {
                return null;
            }
            String status = head.substring(9, 12);
            if (status.equals("503") || status.equals("429")) {
                return status + (head.contains("retry-after:") ? " with Retry-After" : " without Retry-After");
            }
            return status;
        }
    }
}
