package dev.tether.webui;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.core.env.Environment;
import org.springframework.core.io.FileSystemResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.MediaTypeFactory;
import org.springframework.http.server.PathContainer;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.daemon.StartupFailure;

/**
 * Serves the web UI from {@link WebUiProperties#dir()} on every {@code GET}/{@code HEAD} outside the API's own roots,
 * by Executor's rules ({@code apps/local/src/serve.ts}): a file that exists goes out as it is; a path whose last
 * segment has a dot (an asset) and no file is a 404, never {@code index.html} (a stale chunk must fail as a module
 * load, not parse HTML as JavaScript); any other path is an app route ({@code /integrations/x}, {@code /resume/exec_1})
 * and gets {@code index.html}. Vite names everything under {@code /assets/} after its content, so those are cached
 * for a year; {@code index.html} names the current ones, so it is never cached.
 *
 * <p>A router function rather than a resource handler: it is consulted before the annotated controllers, so it
 * leaves their roots alone explicitly, and with no directory set it matches nothing. Authentication is the security
 * filters' business, as for every route.
 */
@Component
final class WebUi implements RouterFunction<ServerResponse> {

    /** Roots the daemon answers itself; Actuator's base path joins them when it shares the API's port. */
    private static final Set<String> API_ROOTS = Set.of("api", "mcp", "sse", "messages");
    private static final CacheControl HASHED = CacheControl.maxAge(Duration.ofDays(365)).cachePublic().immutable();
    private static final CacheControl NEVER = CacheControl.noCache();

    private final @Nullable Path dir;
    private final String actuatorRoot;

    WebUi(WebUiProperties properties, Environment environment) {
        this.dir = properties.dir() == null ? null : usable(properties.dir().toAbsolutePath().normalize());
        this.actuatorRoot = firstSegment(environment.getProperty("management.endpoints.web.base-path", "/actuator"));
    }

    /** Checked once at start, so that a wrong {@code EXECUTOR_CLIENT_DIR} is one line, not a blank window. */
    private static Path usable(Path dir) {
        String hint = " (set tether.web-ui.dir, or EXECUTOR_CLIENT_DIR for bin/executor-sidecar, to the built web UI)";
        if (!Files.isDirectory(dir)) {
            throw new StartupFailure("web UI dir " + dir + " is unusable: "
                    + (Files.exists(dir) ? "it is not a directory" : "it does not exist") + hint);
        }
        Path index = dir.resolve("index.html");
        if (!Files.isRegularFile(index) || !Files.isReadable(index) || !Files.isExecutable(dir)) {
            throw new StartupFailure("web UI dir " + dir + " is unusable: "
                    + (Files.exists(index) ? "index.html cannot be read" : "it has no index.html") + hint);
        }
        return dir;
    }

    @Override
    public Mono<HandlerFunction<ServerResponse>> route(ServerRequest request) {
        Path root = dir;
        if (root == null || !(request.method() == HttpMethod.GET || request.method() == HttpMethod.HEAD)) {
            return Mono.empty();
        }
        List<String> segments = segments(request.requestPath().pathWithinApplication());
        if (segments == null || (!segments.isEmpty()
                && (API_ROOTS.contains(segments.get(0)) || segments.get(0).equals(actuatorRoot)))) {
            return Mono.empty();
        }
        return Mono.just(unused -> answer(root, segments));
    }

    /** Looking at the disk may block: off the event loop. */
    private Mono<ServerResponse> answer(Path root, List<String> segments) {
        return Mono.fromCallable(() -> locate(root, segments))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(found -> found.file() == null
                        ? ServerResponse.notFound().build()
                        : ServerResponse.ok()
                                .contentType(found.type())
                                .cacheControl(found.cache())
                                .body(BodyInserters.fromResource(new FileSystemResource(found.file()))));
    }

    private record Found(@Nullable Path file, MediaType type, CacheControl cache) {
    }

    private static Found locate(Path root, List<String> segments) throws IOException {
        Path file = root;
        for (String segment : segments) {
            file = file.resolve(segment);
        }
        if (!segments.isEmpty() && Files.isRegularFile(file) && Files.isReadable(file) && inside(root, file)) {
            boolean hashed = segments.size() > 1 && segments.get(0).equals("assets");
            MediaType type = MediaTypeFactory.getMediaType(file.getFileName().toString())
                    .orElse(MediaType.APPLICATION_OCTET_STREAM);
            return new Found(file, type, hashed ? HASHED : NEVER);
        }
        boolean asset = !segments.isEmpty() && segments.get(segments.size() - 1).contains(".");
        return asset ? new Found(null, MediaType.TEXT_PLAIN, NEVER)
                : new Found(root.resolve("index.html"), MediaType.TEXT_HTML, NEVER);
    }

    /** A link inside the UI dir must not lead out of it. */
    private static boolean inside(Path root, Path file) throws IOException {
        return file.toRealPath().startsWith(root.toRealPath());
    }

    /**
     * The decoded path segments; null for a path no file can have: a segment that decodes to a separator, a dot
     * segment or a NUL.
     */
    private static @Nullable List<String> segments(PathContainer path) {
        List<String> segments = path.elements().stream()
                .filter(PathContainer.PathSegment.class::isInstance)
                .map(segment -> ((PathContainer.PathSegment) segment).valueToMatch())
                .filter(segment -> !segment.isEmpty())
                .toList();
        boolean unsafe = segments.stream().anyMatch(segment -> segment.equals(".") || segment.equals("..")
                || segment.contains("/") || segment.contains("\\") || segment.indexOf('\0') >= 0);
        return unsafe ? null : segments;
    }

    private static String firstSegment(String basePath) {
        List<String> segments = segments(PathContainer.parsePath(basePath));
        return segments == null || segments.isEmpty() ? "" : segments.get(0);
    }
}
