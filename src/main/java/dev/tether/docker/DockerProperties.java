package dev.tether.docker;

import java.nio.file.Path;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * How Tether reaches the Docker engine and keeps it clean.
 *
 * @param socket         the engine's unix socket; default {@code DOCKER_HOST} when it is a {@code unix://} address, else
 *                       {@code /var/run/docker.sock}
 * @param reapInterval   how often containers of this instance that no live child owns are removed; default 60 s
 * @param requestTimeout bound on each call to the engine; default 10 s
 */
@ConfigurationProperties("tether.docker")
public record DockerProperties(Path socket, Duration reapInterval, Duration requestTimeout) {

    public DockerProperties {
        socket = socket != null ? socket : defaultSocket(System.getenv("DOCKER_HOST"));
        reapInterval = PropertyChecks.positive("tether.docker.reap-interval", reapInterval, Duration.ofSeconds(60));
        requestTimeout = PropertyChecks.positive("tether.docker.request-timeout", requestTimeout, Duration.ofSeconds(10));
    }

    static Path defaultSocket(String dockerHost) {
        if (dockerHost != null && dockerHost.startsWith("unix://")) {
            return Path.of(dockerHost.substring("unix://".length()));
        }
        return Path.of("/var/run/docker.sock");
    }
}
