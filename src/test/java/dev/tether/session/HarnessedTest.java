package dev.tether.session;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test of the session stack wired by hand ({@link PoolHarness}): a test builds its harness in {@link #dir} and
 * keeps it in {@link #harness}; after each test the harness is closed, which fails the test if a process or
 * container it started is still there.
 */
public abstract class HarnessedTest {

    @TempDir
    protected Path dir;

    protected @Nullable PoolHarness harness;

    @AfterEach
    void leaveNothingBehind() {
        if (harness != null) {
            harness.close();
        }
    }
}
