package dev.tether.replicas;

import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import dev.tether.docker.InstanceId;
import dev.tether.store.StoreSharing;

/**
 * Names for what lives in one replica's memory, a paused execution and an agent's MCP session, that say which
 * replica holds it: any replica a load balancer picks can then pass a request for it to that one. On a store no other
 * replica shares, the names are Executor's own ({@code exec_1}, a UUID).
 */
@Component
public final class ReplicaIds {

    private static final Pattern NAMED = Pattern.compile("(?:exec_)?([0-9a-f]{8})[._].+");

    private final String instance;
    private final boolean shared;

    @Autowired
    ReplicaIds(InstanceId instance, StoreSharing sharing) {
        this(instance.value(), sharing.isShared());
    }

    public ReplicaIds(String instance, boolean shared) {
        this.instance = instance;
        this.shared = shared;
    }

    /** The {@code number}th paused execution's id: {@code exec_7}, or {@code exec_<instance>_7} beside other replicas. */
    public String pause(long number) {
        return shared ? "exec_" + instance + "_" + number : "exec_" + number;
    }

    /** A new MCP session's id: a UUID, or {@code <instance>.<UUID>} beside other replicas. */
    public String session() {
        String id = UUID.randomUUID().toString();
        return shared ? instance + "." + id : id;
    }

    /** The replica that holds what {@code id} names, when that is another replica; empty for this one's and for any other id. */
    public Optional<String> elsewhere(String id) {
        Matcher named = NAMED.matcher(id);
        return shared && named.matches() && !named.group(1).equals(instance) ? Optional.of(named.group(1)) : Optional.empty();
    }
}
