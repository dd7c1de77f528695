package dev.tether.discovery;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.Version;
import dev.tether.security.AuthToken;
import dev.tether.process.Pids;

/**
 * Leaves the record by which Executor's CLI finds a running local server, {@code server-control/server.json} in
 * Executor's data dir, pointing at Tether's port and token. Without it, the CLI aimed at a loopback origin finds no
 * server and spawns an {@code executor daemon run} of its own; with it, the CLI uses Tether. The record is removed at
 * stop, unless another server has replaced it meanwhile; a live other server's record is never overwritten.
 */
@Component
final class ExecutorDiscovery implements ApplicationListener<WebServerInitializedEvent>, DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(ExecutorDiscovery.class);

    private final DiscoveryProperties properties;
    private final AuthToken token;
    private final JsonMapper json;
    private final Clock clock;
    private final long pid = Pids.self();
    private final AtomicReference<@Nullable String> writtenOrigin = new AtomicReference<>();
    /** Held from construction (before the port is bound) until the record is written, when exclusive. */
    private final @Nullable DataDirClaim claim;

    ExecutorDiscovery(DiscoveryProperties properties, AuthToken token, JsonMapper json, Clock clock) {
        this.properties = properties;
        this.token = token;
        this.json = json;
        this.clock = clock;
        this.claim = properties.enabled() && properties.exclusive()
                ? DataDirClaim.take(Objects.requireNonNull(manifest().getParent()), json, clock) : null;
    }

    Path manifest() {
        return properties.executorDataDir().resolve("server-control").resolve("server.json");
    }

    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        // The actuator may run its own server on a port of its own; the CLI wants the API's.
        if (!properties.enabled() || event.getApplicationContext().getServerNamespace() != null) {
            return;
        }
        String origin = "http://" + urlHost(properties.host()) + ":" + event.getWebServer().getPort();
        Path file = manifest();
        try {
            Optional<JsonNode> existing = read(file);
            if (existing.isPresent() && ownedByAnotherLiveProcess(existing.get())) {
                log.warn("Executor's CLI will not find Tether: {} names another live server (pid {}) at {}", file,
                        existing.get().path("pid").asLong(), existing.get().path("connection").path("origin").asString());
                return;
            }
            LocalServerManifest manifest = LocalServerManifest.of(pid, clock.instant().toString(),
                    properties.executorDataDir().toAbsolutePath().toString(),
                    properties.scopeDir() == null ? null : properties.scopeDir().toAbsolutePath().toString(), origin,
                    token.bearer(), Version.TETHER, Pids.selfCommand().orElse(null));
            write(file, json.writerWithDefaultPrettyPrinter().writeValueAsString(manifest) + "\n");
            writtenOrigin.set(origin);
            log.info("Executor's CLI finds Tether at {} through {}", origin, file);
        }
        catch (IOException | RuntimeException ex) {
            log.warn("could not write {} for Executor's CLI; it may start a daemon of its own", file, ex);
        }
        finally {
            if (claim != null) {
                claim.close();
            }
        }
    }

    /** Removes the record if it is still this server's: same pid and the origin this context wrote. */
    @Override
    public void destroy() {
        if (claim != null) {
            claim.close(); // a start that failed after the claim
        }
        String origin = writtenOrigin.getAndSet(null);
        if (origin == null) {
            return;
        }
        Path file = manifest();
        try {
            Optional<JsonNode> existing = read(file);
            if (existing.isPresent() && existing.get().path("pid").asLong() == pid
                    && origin.equals(existing.get().path("connection").path("origin").asString())) {
                Files.deleteIfExists(file);
            }
        }
        catch (IOException | RuntimeException ex) {
            log.warn("could not remove {}", file, ex);
        }
    }

    private boolean ownedByAnotherLiveProcess(JsonNode manifest) {
        long owner = manifest.path("pid").asLong();
        return owner != pid && Pids.alive(owner);
    }

    private Optional<JsonNode> read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            return Optional.of(json.readTree(Files.readString(file)));
        }
        catch (RuntimeException unreadable) {
            return Optional.empty(); // Executor's CLI ignores a record it cannot parse, and so does Tether
        }
    }

    /** Written whole or not at all, readable by the owner only: it holds the bearer token. */
    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Path temp = Files.createTempFile(file.getParent(), ".server", ".json",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(temp, text);
            try {
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            catch (AtomicMoveNotSupportedException ex) {
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        }
        finally {
            Files.deleteIfExists(temp);
        }
    }

    /** An IPv6 literal goes in brackets, as in a URL. */
    private static String urlHost(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }
}
