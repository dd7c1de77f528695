package dev.tether.replicas;

import java.time.Duration;

/** This replica holds no lease on the shared store and could not renew it: it serves nothing a peer may take over. */
public final class LeaseLostException extends RuntimeException {

    LeaseLostException(String instance, Duration waited) {
        super("replica " + instance + " holds no lease on the shared store and could not renew it within " + waited
                + " (the store out of reach?); its peers may take its connections over: try another replica");
    }
}
