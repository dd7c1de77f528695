package dev.tether.discovery;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.StartupFailure;
import dev.tether.process.Pids;

/**
 * Executor's rules for owning a data dir, which its desktop app applies before it starts a sidecar
 * ({@code apps/desktop/src/main/sidecar.ts}): a start takes {@code server-control/startup.lock} (created exclusively,
 * {@code {"pid", "startedAt"}}) and holds it until the server's record is written; a lock or a
 * {@code server.json} of a live process stops the start, a dead process's is cleared. Tether applies them itself when
 * it is the sidecar, so that it also holds when started without the app; a lock its parent holds is the app's, taken
 * for this very start.
 */
final class DataDirClaim implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DataDirClaim.class);

    private final Path lock;
    private final AtomicBoolean held;

    private DataDirClaim(Path lock, boolean held) {
        this.lock = lock;
        this.held = new AtomicBoolean(held);
    }

    /**
     * Takes the start-up lock and checks the record in {@code controlDir}.
     *
     * @throws StartupFailure naming the live owner when another server owns the data dir or is starting in it
     */
    static DataDirClaim take(Path controlDir, JsonMapper json, Clock clock) {
        Path lock = controlDir.resolve("startup.lock");
        DataDirClaim claim;
        try {
            Files.createDirectories(controlDir);
            claim = new DataDirClaim(lock, lock(lock, json, clock));
        }
        catch (IOException ex) {
            throw new StartupFailure("cannot take " + lock + ": " + ex.getMessage());
        }
        try {
            clearDeadRecordOrRefuse(controlDir.resolve("server.json"), json);
            return claim;
        }
        catch (RuntimeException ex) {
            claim.close();
            throw ex;
        }
    }

    /** True when this process took the lock, false when its parent holds it for this start. */
    private static boolean lock(Path lock, JsonMapper json, Clock clock) throws IOException {
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("pid", Pids.self());
        payload.put("startedAt", clock.instant().toString());
        byte[] bytes = (json.writerWithDefaultPrettyPrinter().writeValueAsString(payload) + "\n")
                .getBytes(StandardCharsets.UTF_8);
        if (create(lock, bytes)) {
            return true;
        }
        Optional<Long> holder = lockHolder(lock, json);
        if (holder.isPresent() && holder.equals(Pids.parent())) {
            return false;
        }
        if (holder.isPresent() && !Pids.alive(holder.get())) {
            log.info("clearing {} of pid {}, which is gone", lock, holder.get());
            Files.deleteIfExists(lock);
            if (create(lock, bytes)) {
                return true;
            }
        }
        throw new StartupFailure("another local Executor server is starting in this data dir: " + lock + " is held"
                + holder.map(pid -> " by pid " + pid).orElse(""));
    }

    private static boolean create(Path lock, byte[] bytes) throws IOException {
        try {
            Files.write(lock, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            return true;
        }
        catch (FileAlreadyExistsException taken) {
            return false;
        }
    }

    private static Optional<Long> lockHolder(Path lock, JsonMapper json) {
        try {
            JsonNode pid = json.readTree(Files.readString(lock)).path("pid");
            return pid.isNumber() ? Optional.of(pid.asLong()) : Optional.empty();
        }
        catch (IOException | RuntimeException unreadable) {
            return Optional.empty(); // as Executor: a lock nobody can read is not known to be dead
        }
    }

    private static void clearDeadRecordOrRefuse(Path record, JsonMapper json) {
        JsonNode manifest;
        try {
            if (!Files.isRegularFile(record)) {
                return;
            }
            manifest = json.readTree(Files.readString(record));
        }
        catch (IOException | RuntimeException unreadable) {
            return; // Executor's app ignores a record it cannot parse, and so does Tether
        }
        long pid = manifest.path("pid").asLong();
        if (pid == Pids.self()) {
            return;
        }
        if (Pids.alive(pid)) {
            throw new StartupFailure("a local Executor " + manifest.path("kind").asString("server") + " is already running at "
                    + manifest.path("connection").path("origin").asString("?") + " (pid " + pid + ") and owns the data dir "
                    + manifest.path("dataDir").asString("?") + ": stop it before starting the desktop sidecar");
        }
        try {
            Files.deleteIfExists(record);
            log.info("cleared {} of pid {}, which is gone", record, pid);
        }
        catch (IOException ex) {
            throw new StartupFailure("cannot clear " + record + " of pid " + pid + ", which is gone: " + ex.getMessage());
        }
    }

    /** Releases the lock if this process took it; idempotent. */
    @Override
    public void close() {
        if (held.getAndSet(false)) {
            try {
                Files.deleteIfExists(lock);
            }
            catch (IOException ex) {
                log.warn("could not remove {}", lock, ex);
            }
        }
    }
}
