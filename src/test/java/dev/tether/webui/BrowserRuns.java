package dev.tether.webui;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the browser ITs share to run a script of {@code src/test/browser}. */
final class BrowserRuns {

    private BrowserRuns() {
    }

    /**
     * The command in a network namespace of its own, holding only loopback, when the machine allows one (Chromium
     * aborts requests with ERR_NETWORK_CHANGED whenever Docker adds or removes an interface); otherwise as it is.
     */
    static List<String> isolated(List<String> command) throws IOException, InterruptedException {
        Process probe = new ProcessBuilder("unshare", "--net", "true").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!probe.waitFor(10, TimeUnit.SECONDS) || probe.exitValue() != 0) {
            System.err.println("[WARNING] cannot make a network namespace: Chromium may see Docker's interface changes");
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("unshare", "--net", "sh", "-c", "ip link set lo up && exec \"$@\"", "sh"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Deletes a run's directory of an earlier run, if any. */
    static void delete(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }
}
