package dev.tether.mcp;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.Disposable;

import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.testsupport.LifecycleGuard.Launch;

/** The cancellation matrix with the fixture as a plain child of the daemon. */
class PlainChildCancellationTest extends CancellationMatrix {

    @Override
    Launch launch(List<String> flags) {
        return guard.plain(flags.toArray(String[]::new));
    }

    @Override
    ContainerRemover containers() {
        return ContainerRemover.NONE;
    }

    @Override
    Disposable startReaper(ChildProcesses children, MeterRegistry registry) {
        return () -> { };
    }

    @Override
    Duration reapInterval() {
        return Duration.ZERO;
    }
}
