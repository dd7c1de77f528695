package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.Prerequisites;

/**
 * The packaged daemon as an operator runs it: its own environment (API token, store password) never reaches a child;
 * its data dir is owner-only with no secret readable in the store's files; and a data dir it cannot use or a store
 * key that does not fit stops it with one line, no stack trace.
 */
class SecretsIT {

    /** When a refused start is called stuck (it exits in seconds; a start took minutes at load 25 here). */
    private static final long EXIT_BOUND_SECONDS = 300;

    @TempDir
    Path root;

    private final String secret = UUID.randomUUID().toString();
    private final List<PackagedDaemon> daemons = new ArrayList<>();

    @AfterEach
    void stopDaemons() throws InterruptedException {
        for (PackagedDaemon daemon : daemons) {
            daemon.close();
        }
    }

    @Test
    void aChildNeverSeesTheDaemonsTokenOrStoreSettingsAndTheDataDirHoldsNoSecretInClear() throws Exception {
        Path dataDir = root.resolve("fresh").resolve("tether");
        PackagedDaemon daemon = start(dataDir, Map.of("TETHER_API_TOKEN", "daemon-token-" + secret,
                "SPRING_MAIL_PASSWORD", "store-password-" + secret));
        TetherClient tether = new TetherClient(daemon.port(), "daemon-token-" + secret);
        String slug = tether.register("env_probe", Fixture.command("--env-tool"), Map.of("FROM_CONFIG", "env-" + secret));
        // A call finds only tools of a synced catalog.
        assertThat(tether.post("/api/connections/org/" + slug + "/default/refresh", null).status()).isEqualTo(200);
        assertThat(tether.post("/api/connections", Map.of("owner", "user", "name", "alice", "integration", slug,
                "template", "API_TOKEN", "value", "credential-" + secret)).status()).isEqualTo(200);

        assertThat(env(tether, slug, "TETHER_API_TOKEN")).as("the daemon's token").isEqualTo("unset");
        assertThat(env(tether, slug, "SPRING_MAIL_PASSWORD")).as("a SPRING_ password").isEqualTo("unset");
        assertThat(env(tether, slug, "TETHER_DATA_DIR")).isEqualTo("unset");
        assertThat(env(tether, slug, "FROM_CONFIG")).as("the config's own value").startsWith("sha256:");
        assertThat(env(tether, slug, "PATH")).startsWith("sha256:");
        JsonNode health = tether.health(slug).json();
        assertThat(health.toString()).doesNotContain(secret);
        daemon.stop();

        assertThat(mode(dataDir)).as(dataDir.toString()).isEqualTo("rwx------");
        try (Stream<Path> paths = Files.walk(dataDir)) {
            for (Path path : paths.filter(p -> !p.getFileName().toString().startsWith("daemon-")).toList()) {
                assertThat(mode(path)).as(path.toString()).isEqualTo(Files.isDirectory(path) ? "rwx------" : "rw-------");
            }
        }
        assertThat(dataDir.resolve("secret.key")).exists();
        try (Stream<Path> store = Files.list(dataDir.resolve("store"))) {
            List<Path> files = store.toList();
            assertThat(files).anySatisfy(file -> assertThat(file.getFileName().toString()).endsWith(".mv.db"));
            for (Path file : files) {
                assertThat(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1)).as(file.toString())
                        .doesNotContain(secret);
            }
        }

        Failed wrongKey = failToStart(dataDir, Map.of("TETHER_STORE_SECRET_KEY", Base64.getEncoder().encodeToString(new byte[32])));
        assertThat(wrongKey.output()).contains("tether: ").contains("tether.store.secret-key").doesNotContain(secret);
        // Refused while the context starts: Spring adds its own one-line warning, without a stack trace.
        assertNoStackTrace(wrongKey);
    }

    @Test
    void aDataDirThroughARegularFileStopsTheStartWithOneLine() throws Exception {
        Path file = Files.writeString(root.resolve("a-file"), "not a directory");
        Failed failed = failToStart(file.resolve("tether"), Map.of());
        assertThat(failed.output()).contains("tether: data dir " + file.resolve("tether") + " is unusable")
                .contains("is not a directory");
        assertOneLineNoStackTrace(failed);
    }

    @Test
    void aDataDirThatIsARegularFileStopsTheStartWithOneLine() throws Exception {
        Path file = Files.writeString(root.resolve("data-file"), "not a directory");
        Failed failed = failToStart(file, Map.of());
        assertThat(failed.output()).contains("tether: data dir " + file + " is unusable");
        assertOneLineNoStackTrace(failed);
    }

    /** Tests run as root, for whom mode bits do not stop a write: an immutable directory ({@code chattr +i}) does. */
    @Test
    void aDataDirThatCannotBeWrittenStopsTheStartWithOneLine() throws Exception {
        Path dir = Files.createDirectories(root.resolve("read-only"));
        Prerequisites.require(chattr("+i", dir), "chattr +i did not make " + dir + " unwritable",
                "root with CAP_LINUX_IMMUTABLE on a file system with the immutable flag, as .ci/run is on ext4");
        try {
            Failed failed = failToStart(dir, Map.of());
            assertThat(failed.output()).contains("tether: data dir " + dir + " is unusable: cannot create a file in it");
            assertOneLineNoStackTrace(failed);
        }
        finally {
            chattr("-i", dir);
        }
    }

    private static boolean chattr(String flag, Path dir) throws IOException, InterruptedException {
        Process chattr = new ProcessBuilder("chattr", flag, dir.toString()).redirectErrorStream(true).start();
        return chattr.waitFor(10, TimeUnit.SECONDS) && chattr.exitValue() == 0
                && (!flag.equals("+i") || !Files.isWritable(dir) || !canCreateIn(dir));
    }

    private static boolean canCreateIn(Path dir) {
        try {
            Files.delete(Files.createTempFile(dir, "probe", null));
            return true;
        }
        catch (IOException refused) {
            return false;
        }
    }

    private record Failed(int exitCode, String output) {
    }

    /** Before the context starts (the data dir): the one line and nothing else of note. */
    private static void assertOneLineNoStackTrace(Failed failed) {
        assertNoStackTrace(failed);
        assertThat(failed.output()).as(failed.output()).doesNotContain("Exception").doesNotContain("ERROR");
    }

    private static void assertNoStackTrace(Failed failed) {
        assertThat(failed.exitCode()).as(failed.output()).isNotZero();
        assertThat(failed.output()).as(failed.output()).doesNotContain("\tat ").doesNotContain("Caused by")
                .doesNotContain("APPLICATION FAILED TO START");
        assertThat(failed.output().lines().filter(line -> line.startsWith("tether: ")).count()).as(failed.output()).isEqualTo(1);
    }

    private Failed failToStart(Path dataDir, Map<String, String> environment) throws IOException, InterruptedException {
        Path log = Files.createTempFile(root, "failed-start", ".log");
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-XX:TieredStopAtLevel=1", "-jar", PackagedDaemon.jarOrSkip().toString(), "--server.port=" + Fixture.freeLoopbackPort());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("TETHER_DATA_DIR", dataDir.toString());
        builder.environment().putAll(environment);
        Process process = builder.start();
        try {
            assertThat(process.waitFor(EXIT_BOUND_SECONDS, TimeUnit.SECONDS)).as("the daemon gave up").isTrue();
            return new Failed(process.exitValue(), Files.readString(log));
        }
        finally {
            process.destroyForcibly();
        }
    }

    private static String env(TetherClient tether, String slug, String name) {
        Reply reply = tether.post("/api/tools/call", Map.of("address", "tools." + slug + ".org.default.env", "args", Map.of("name", name)));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json().path("content").get(0).path("text").asString();
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }

    private PackagedDaemon start(Path dataDir, Map<String, String> environment) throws IOException, InterruptedException {
        Files.createDirectories(dataDir.getParent());
        PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dataDir, List.of(), environment);
        daemons.add(daemon);
        return daemon;
    }
}
