package dev.tether.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Throwaway Tether data dirs, one per daemon under test, and what a daemon writes into one. */
final class DataDirs {

    private DataDirs() {
    }

    /**
     * A fresh temp dir, deleted when the JVM exits: only then is it sure that the daemon using it has stopped,
     * since Spring closes a test's context after the test class is done, and a daemon's shutdown still writes
     * its child ledger there.
     */
    static Path create(String purpose) {
        try {
            Path dir = Files.createTempDirectory("tether-api-" + purpose + "-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir), "delete " + dir));
            return dir;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The id the daemon labels its containers with ({@code tether.instance}). */
    static String instanceId(Path dataDir) {
        return read(dataDir.resolve("instance-id")).strip();
    }

    /** The bearer token from {@code server-control/auth.json}. */
    static String token(Path dataDir) {
        return TetherClient.JSON.readTree(read(authFile(dataDir))).get("token").asString();
    }

    static Path authFile(Path dataDir) {
        return dataDir.resolve("server-control").resolve("auth.json");
    }

    static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> tree = Files.walk(dir)) {
            tree.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (IOException ex) {
            // best effort: it is a temp dir
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
