package dev.tether.docker;

/** The Docker engine answered a call with an unexpected status. */
public final class DockerEngineException extends RuntimeException {

    DockerEngineException(String action, int status, String body) {
        super("Docker engine failed " + action + ": HTTP " + status + " " + body.strip());
    }
}
