package dev.tether.mcp;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.Disposable;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.docker.ContainerReaper;
import dev.tether.docker.DockerEngine;
import dev.tether.docker.DockerProperties;
import dev.tether.docker.InstanceId;
import dev.tether.process.ChildProcesses;
import dev.tether.process.ContainerRemover;
import dev.tether.testsupport.LifecycleGuard.Launch;
import dev.tether.testsupport.RequiresDocker;

/**
 * The cancellation matrix with the fixture inside {@code docker run -i --rm}: killing the docker client does
 * not stop its container, so these cases prove that the last rung removes it, by asking the engine.
 */
@RequiresDocker
class DockerChildCancellationTest extends CancellationMatrix {

    private static final Duration REAP_INTERVAL = Duration.ofSeconds(1);

    private final DockerEngine engine = new DockerEngine(new DockerProperties(null, null, null),
            JsonMapper.builder().build());

    @Override
    Launch launch(List<String> flags) {
        return guard.docker(flags.toArray(String[]::new));
    }

    @Override
    ContainerRemover containers() {
        return engine;
    }

    @Override
    Disposable startReaper(ChildProcesses children, MeterRegistry registry) {
        ContainerReaper reaper = new ContainerReaper(engine, new InstanceId(guard.tether()), children,
                new DockerProperties(null, REAP_INTERVAL, null), registry);
        reaper.start();
        return reaper::stop;
    }

    @Override
    Duration reapInterval() {
        return REAP_INTERVAL;
    }
}
