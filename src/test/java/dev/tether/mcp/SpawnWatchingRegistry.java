package dev.tether.mcp;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * A meter registry that opens a latch when the first child is counted as spawned, which the daemon does right after
 * fork/exec returned: the instant a test cancels at to hit the spawn phase, waited for without spinning a core.
 */
final class SpawnWatchingRegistry extends SimpleMeterRegistry {

    private final CountDownLatch spawned = new CountDownLatch(1);

    /** Blocks until a child was spawned; fails after {@code bound}. */
    void awaitSpawn(Duration bound) {
        try {
            if (!spawned.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                fail("no child was started within " + bound);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            fail("interrupted while waiting for a spawn");
        }
    }

    @Override
    protected Counter newCounter(Meter.Id id) {
        Counter counter = super.newCounter(id);
        if (!id.getName().equals("tether.children.spawned")) {
            return counter;
        }
        return new Counter() {
            @Override
            public void increment(double amount) {
                counter.increment(amount);
                spawned.countDown();
            }

            @Override
            public double count() {
                return counter.count();
            }

            @Override
            public Meter.Id getId() {
                return counter.getId();
            }
        };
    }
}
