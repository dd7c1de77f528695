package dev.tether.api;

import java.util.List;

import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import org.testcontainers.DockerClientFactory;

import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * Cleans up after a test whatever its daemon may have left, so that one failing test does not strand
 * containers or processes for the next: only containers carrying both {@link Fixture#DOCKER_LABEL} and the
 * given label value, only processes whose command line holds a fragment unique to the test.
 */
final class Leftovers {

    private Leftovers() {
    }

    /** Force-removes the test containers labelled {@code key=value}; returns how many there were. */
    static int removeContainers(String key, String value) {
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            return 0;
        }
        var docker = DockerClientFactory.instance().client();
        List<Container> containers = DockerContainers.withLabel(key, value).stream()
                .filter(c -> c.getLabels() != null && c.getLabels().containsKey(Fixture.DOCKER_LABEL))
                .toList();
        for (Container container : containers) {
            try {
                docker.removeContainerCmd(container.getId()).withForce(true).withRemoveVolumes(true).exec();
            }
            catch (NotFoundException | ConflictException ex) {
                // gone already, or --rm is removing it
            }
        }
        return containers.size();
    }

    /** SIGKILLs every live process whose command line holds {@code fragment}; returns how many. */
    static int killProcesses(String fragment) {
        List<ProcessHandle> survivors = OsProcesses.matching(fragment);
        survivors.forEach(ProcessHandle::destroyForcibly);
        return survivors.size();
    }
}
