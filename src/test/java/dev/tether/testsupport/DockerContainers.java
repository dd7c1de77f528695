package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.EventType;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.testcontainers.DockerClientFactory;

/**
 * What the Docker engine says about containers (via Testcontainers' client), independent of
 * anything Tether records. Lists include stopped containers ({@code all=true}).
 */
public final class DockerContainers {

    private static final Duration POLL = Duration.ofMillis(100);

    private DockerContainers() {
    }

    /** Containers, running or not, whose label {@code key} equals {@code value}. */
    public static List<Container> withLabel(String key, String value) {
        return DockerClientFactory.instance().client().listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(Map.of(key, value))
                .exec();
    }

    /** Polls until no container has label {@code key=value}; fails after {@code bound}, naming the survivors. */
    public static void awaitNoneWithLabel(String key, String value, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            List<Container> survivors = withLabel(key, value);
            if (survivors.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                fail(survivors.size() + " container(s) labelled " + key + "=" + value + " still present after "
                        + bound + ": " + survivors.stream().map(DockerContainers::describe)
                        .collect(Collectors.joining("; ")));
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting for containers to go");
            }
        }
    }

    /**
     * Counts, from the engine's own event stream, how many containers labelled {@code key=value} exist at once (created,
     * not yet destroyed: running or being removed), from now until closed: every creation and removal is seen as it
     * happens, where sampling the list would miss a short peak and take a core to look often enough.
     */
    public static ContainersAtOnce countAtOnce(String key, String value) {
        ContainersAtOnce count = new ContainersAtOnce();
        DockerClientFactory.instance().client().eventsCmd()
                .withEventTypeFilter(EventType.CONTAINER)
                .withEventFilter("create", "destroy")
                .withLabelFilter(Map.of(key, value))
                .withSince(Long.toString(Instant.now().getEpochSecond() - 1))
                .exec(count);
        return count;
    }

    /** What {@link #countAtOnce} keeps: the containers now, and the most at once. */
    public static final class ContainersAtOnce extends ResultCallback.Adapter<Event> {

        private final AtomicInteger now = new AtomicInteger();
        private final AtomicInteger most = new AtomicInteger();

        @Override
        public void onNext(Event event) {
            if ("create".equals(event.getAction())) {
                most.accumulateAndGet(now.incrementAndGet(), Math::max);
            }
            else if ("destroy".equals(event.getAction())) {
                now.decrementAndGet();
            }
        }

        public int most() {
            return most.get();
        }

        public int now() {
            return now.get();
        }
    }

    /** Force-removes every container carrying label {@code key} (any value); returns how many. */
    public static int removeAllWithLabel(String key) {
        var docker = DockerClientFactory.instance().client();
        List<Container> containers = docker.listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(List.of(key))
                .exec();
        for (Container c : containers) {
            try {
                docker.removeContainerCmd(c.getId()).withForce(true).withRemoveVolumes(true).exec();
            } catch (NotFoundException | ConflictException e) {
                // already gone, or --rm removal in progress
            }
        }
        return containers.size();
    }

    /** "/name (image, state running, Up 3 seconds)", for failure messages. */
    public static String describe(Container c) {
        String names = c.getNames() == null ? c.getId() : String.join(",", Arrays.asList(c.getNames()));
        // Tether's own labels say which replica and session started it, and the creation time when: what a leftover
        // needs to be traced in the replicas' logs
        String tether = c.getLabels() == null ? "" : c.getLabels().entrySet().stream()
                .filter(label -> label.getKey().startsWith("tether."))
                .map(label -> label.getKey() + "=" + label.getValue()).sorted().collect(Collectors.joining(" "));
        String created = c.getCreated() == null ? "" : ", created " + Instant.ofEpochSecond(c.getCreated());
        return names + " (" + c.getImage() + ", state " + c.getState() + ", " + c.getStatus() + created
                + (tether.isEmpty() ? "" : ", " + tether) + ")";
    }
}
