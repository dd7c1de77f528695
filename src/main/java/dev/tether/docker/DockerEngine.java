package dev.tether.docker;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.process.ChildSpec;
import dev.tether.process.ContainerRemover;

/**
 * The few Docker Engine API calls Tether needs, over the engine's unix socket: cheaper and clearer than
 * shelling out to the docker CLI for every teardown.
 */
@Component
public final class DockerEngine implements ContainerRemover {

    /** One row of {@code GET /containers/json}. */
    public record ContainerSummary(@JsonProperty("Id") String id, @JsonProperty("Names") List<String> names,
            @JsonProperty("Labels") Map<String, String> labels, @JsonProperty("State") String state,
            @JsonProperty("Created") long created) {

        /** When the container was created, to the second. */
        public Instant createdAt() {
            return Instant.ofEpochSecond(created);
        }

        public @Nullable String label(String key) {
            return labels == null ? null : labels.get(key);
        }
    }

    private final HttpClient http;
    private final JsonMapper json;

    public DockerEngine(DockerProperties properties, JsonMapper json) {
        this.json = json;
        this.http = HttpClient.create()
                .remoteAddress(() -> new DomainSocketAddress(properties.socket().toString()))
                .responseTimeout(properties.requestTimeout());
    }

    /** Ends the container of {@code child} ({@link #stop}), found by the label the rewrite gave it. */
    @Override
    public Mono<Boolean> stopContainerOf(ChildSpec child, Duration grace) {
        return containerOf(child).flatMap(id -> stop(id, grace)).defaultIfEmpty(false);
    }

    /** Removes the container of {@code child}, found by the label the rewrite gave it; false when it has none. */
    @Override
    public Mono<Boolean> removeContainerOf(ChildSpec child) {
        return containerOf(child).flatMap(this::remove).defaultIfEmpty(false);
    }

    /**
     * The id of {@code child}'s container: by its {@code tether.session} label, never by name, as a name may have passed
     * to another child's container since (a connection's fenced name, on an engine replicas share).
     */
    private Mono<String> containerOf(ChildSpec child) {
        return containersLabelled(DockerLabels.SESSION, child.id()).next().map(ContainerSummary::id);
    }

    /**
     * Ends a container (by id or name): a running one is stopped as {@code docker stop} does (SIGTERM to its PID 1,
     * SIGKILL after {@code grace}); one that does not run is removed. False when the engine has no such container.
     */
    public Mono<Boolean> stop(String containerName, Duration grace) {
        long seconds = Math.max(1, (grace.toMillis() + 999) / 1000);
        return http.post()
                .uri("/containers/" + encode(containerName) + "/stop?t=" + seconds)
                .responseSingle((response, body) -> {
                    int status = response.status().code();
                    if (status == HttpResponseStatus.NO_CONTENT.code()) {
                        return Mono.just(true);
                    }
                    // Not running: created and not started yet, or exited. Nothing runs in it to be killed, and a
                    // client about to start it (or waiting for it) exits once it is gone.
                    if (status == HttpResponseStatus.NOT_MODIFIED.code()) {
                        return remove(containerName).thenReturn(true);
                    }
                    // Not created yet: the client's request for it is still on its way.
                    if (status == HttpResponseStatus.NOT_FOUND.code()) {
                        return Mono.just(false);
                    }
                    // Being removed already (--rm after its exit): it is ending.
                    if (status == HttpResponseStatus.CONFLICT.code()) {
                        return Mono.just(true);
                    }
                    return body.asString().defaultIfEmpty("").flatMap(text -> Mono.error(
                            new DockerEngineException("stopping container " + containerName, status, text)));
                });
    }

    /** Removes a container (by id or name), forcibly; false when there was none. */
    public Mono<Boolean> remove(String containerName) {
        return http.delete()
                .uri("/containers/" + encode(containerName) + "?force=true&v=true")
                .responseSingle((response, body) -> {
                    int status = response.status().code();
                    if (status == HttpResponseStatus.NO_CONTENT.code()) {
                        return Mono.just(true);
                    }
                    // 404: already gone (--rm got there first); 409: the engine is already removing it.
                    if (status == HttpResponseStatus.NOT_FOUND.code() || status == HttpResponseStatus.CONFLICT.code()) {
                        return Mono.just(false);
                    }
                    return body.asString().defaultIfEmpty("").flatMap(text -> Mono.error(
                            new DockerEngineException("removing container " + containerName, status, text)));
                });
    }

    /** Containers, running or not, that carry the label {@code key=value}. */
    public Flux<ContainerSummary> containersLabelled(String key, String value) {
        String filters = json.writeValueAsString(Map.of("label", List.of(key + "=" + value)));
        return http.get()
                .uri("/containers/json?all=true&filters=" + encode(filters))
                .responseSingle((response, body) -> body.asString().defaultIfEmpty("[]").flatMap(text -> {
                    if (response.status().code() != HttpResponseStatus.OK.code()) {
                        return Mono.error(new DockerEngineException("listing containers", response.status().code(), text));
                    }
                    return Mono.just(json.readValue(text, new TypeReference<List<ContainerSummary>>() { }));
                }))
                .flatMapMany(Flux::fromIterable);
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
