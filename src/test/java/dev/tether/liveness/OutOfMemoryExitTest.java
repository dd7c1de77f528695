package dev.tether.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.scheduler.Schedulers;

/**
 * A real {@link OutOfMemoryError}, in a JVM of its own with a small heap, where the daemon's code does not catch it: on
 * a thread of its own and in a Reactor scheduler's task. The process ends with status 70 and one line naming the
 * thread, instead of living on with that thread dead.
 */
class OutOfMemoryExitTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = { "thread", "scheduler" })
    void anOutOfMemoryErrorEndsTheProcessWithOneClearLine(String where) throws IOException, InterruptedException {
        Path err = dir.resolve("err.txt");
        Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx32m",
                "-cp", System.getProperty("java.class.path"), RunsOutOfMemory.class.getName(), where)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();

        assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).as("the process ends").isTrue();
        assertThat(jvm.exitValue()).as("its status; stderr: %s", Files.readString(err)).isEqualTo(OutOfMemoryExit.STATUS);
        assertThat(Files.readAllLines(err)).filteredOn(line -> line.startsWith("tether: ")).singleElement().asString()
                .startsWith("tether: out of memory on thread filler")
                .endsWith("the daemon exits so that its supervisor restarts it");
    }

    /** Fills the heap on a thread named {@code filler}, plain or a Reactor scheduler's; ends 0 if nothing stops it. */
    static final class RunsOutOfMemory {

        public static void main(String[] args) throws InterruptedException {
            new OutOfMemoryExit();
            Runnable fill = () -> {
                List<long[]> held = new ArrayList<>();
                while (true) {
                    held.add(new long[1 << 20]);
                }
            };
            if (args[0].equals("thread")) {
                Thread filler = new Thread(fill, "filler");
                filler.start();
                filler.join();
            }
            else {
                Schedulers.newSingle("filler").schedule(fill);
                Thread.sleep(20_000);
            }
            System.exit(0);
        }
    }
}
