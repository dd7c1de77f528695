package dev.tether.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tether.testsupport.ExecutorCli;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.RequiresExecutorCli;

/**
 * The packaged daemon with {@code HOME} pointing elsewhere than the account's home (a container, CI, sudo, a test's
 * own home): its record goes where Executor's CLI, with the same {@code HOME}, looks, and the CLI uses it.
 */
class HomeDirectoryIT {

    @TempDir
    Path dir;

    @Test
    @RequiresExecutorCli
    void theCliWithAFreshHomeFindsTetherAndStartsNoDaemon() throws Exception {
        Path home = Files.createDirectories(dir.resolve("fresh-home"));
        // EXECUTOR_DATA_DIR blank: the failsafe run sets it for the other tests, and blank counts as unset
        try (PackagedDaemon daemon = PackagedDaemon.start(PackagedDaemon.jarOrSkip(), dir.resolve("data"), List.of(),
                Map.of("HOME", home.toString(), "EXECUTOR_DATA_DIR", ""))) {
            Path record = home.resolve(".executor/server-control/server.json");
            assertThat(record).exists();
            ExecutorCli cli = new ExecutorCli(home);
            try {
                ExecutorCli.Result result = cli.run("call", "--help");
                assertThat(result.exitCode()).as(result.output()).isZero();
                assertThat(result.output()).doesNotContain("Starting daemon");
                assertThat(cli.daemonsStarted()).isEmpty();
            }
            finally {
                cli.stopDaemonsStarted(java.time.Duration.ofSeconds(20));
            }
        }
    }
}
