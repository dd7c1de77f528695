package dev.tether.replicas;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * Replicas on a shared store.
 *
 * @param leaseTtl  how long a replica's lease lasts without renewal: a replica silent this long is taken for dead
 *                  and its containers removed by a peer; default 15 s
 * @param heartbeat how often a replica renews its lease and looks for peers' expired ones; default 5 s, and less
 *                  than a third of {@code lease-ttl}, so that two missed renewals do not yet cost the lease
 * @param address   how peers reach this replica, written in its lease: {@code host} or {@code host:port}; default the
 *                  host name, and without a port the API's own port is added
 * @param forwardConnectTimeout how long a replica waits to connect to a connection's owner before it reads the
 *                  leases again (the owner may have just left) or answers 503; default 2 s
 * @param drainDelay how long a replica told to stop keeps accepting connections once it has turned unready and handed
 *                  its connections to its peers (passing what it receives to them), so that a load balancer's health
 *                  checks see it leave before it stops listening; default 2 s, and only beside other replicas
 * @param handoverWait how long a replica about to start a connection's child waits for a live peer's container of that
 *                  connection to go (the peer is handing it over: draining, or it learns at its next read of the leases
 *                  that it no longer owns the connection) before the request fails with 503; default 30 s
 * @param tombstone how long peers keep removing a dead replica's containers after they reaped it: a {@code docker run}
 *                  client it left may still have its container created later, when the engine gets to it; default 60 s
 * @param probeTimeout how long a replica whose lease ran out has to answer at its address before a peer takes it for
 *                  dead; one that answers is slow, not dead; default 2 s
 */
@ConfigurationProperties("tether.replicas")
public record ReplicaProperties(Duration leaseTtl, Duration heartbeat, String address, Duration forwardConnectTimeout,
        Duration drainDelay, Duration handoverWait, Duration tombstone, Duration probeTimeout) {

    public ReplicaProperties(@Nullable Duration leaseTtl, @Nullable Duration heartbeat, @Nullable String address,
            @Nullable Duration forwardConnectTimeout, @Nullable Duration drainDelay, @Nullable Duration handoverWait,
            @Nullable Duration tombstone, @Nullable Duration probeTimeout) {
        this.leaseTtl = PropertyChecks.positive("tether.replicas.lease-ttl", leaseTtl, Duration.ofSeconds(15));
        this.heartbeat = PropertyChecks.positive("tether.replicas.heartbeat", heartbeat, Duration.ofSeconds(5));
        if (this.heartbeat.multipliedBy(3).compareTo(this.leaseTtl) > 0) {
            throw new IllegalArgumentException("tether.replicas.heartbeat must be at most a third of tether.replicas.lease-ttl, was "
                    + this.heartbeat + " against " + this.leaseTtl);
        }
        this.address = address == null || address.isBlank() ? hostName() : address.strip();
        this.forwardConnectTimeout = PropertyChecks.positive("tether.replicas.forward-connect-timeout", forwardConnectTimeout,
                Duration.ofSeconds(2));
        this.drainDelay = PropertyChecks.notNegative("tether.replicas.drain-delay", drainDelay, Duration.ofSeconds(2));
        this.handoverWait = PropertyChecks.positive("tether.replicas.handover-wait", handoverWait, Duration.ofSeconds(30));
        this.tombstone = PropertyChecks.positive("tether.replicas.tombstone", tombstone, Duration.ofSeconds(60));
        this.probeTimeout = PropertyChecks.positive("tether.replicas.probe-timeout", probeTimeout, Duration.ofSeconds(2));
    }

    public static ReplicaProperties defaults() {
        return new ReplicaProperties(null, null, null, null, null, null, null, null);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (UnknownHostException ex) {
            return "unknown";
        }
    }
}
