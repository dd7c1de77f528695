package dev.tether.replicas.forwarding;

/**
 * What a replica answers at {@value #PATH} ({@link PeerExchange#alive}): which replica answered, since another may
 * listen at a dead one's address by now.
 */
public record Alive(String instance) {

    public static final String PATH = "/api/replicas/alive";
}
