package dev.tether.replicas;

import java.security.SecureRandom;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import dev.tether.docker.InstanceId;
import dev.tether.store.StoreSharing;

/**
 * Names for what one replica holds in memory, a paused execution and an agent's MCP session, that say which replica
 * made it: any replica a load balancer picks can then pass a request for it to that one. Execution ids are random and
 * unguessable (130 bits), so they never repeat, across restarts and replicas alike; beside other replicas they carry the
 * instance id as a hint (a paused execution survives its replica in the store, and any replica can resume it). On a
 * store no other replica shares, {@code exec_<random>} and a UUID.
 */
@Component
public final class ReplicaIds {

    private static final Pattern NAMED = Pattern.compile("(?:exec_)?([0-9a-f]{8})[._].+");
    private static final char[] BASE32 = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    /** 26 base-32 characters: 130 random bits. */
    private static final int RANDOM_CHARS = 26;
    private static final SecureRandom RANDOM = new SecureRandom();

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

    /** A new paused execution's id: {@code exec_<random>}, or {@code exec_<instance>_<random>} beside other replicas. */
    public String execution() {
        byte[] bytes = new byte[RANDOM_CHARS];
        RANDOM.nextBytes(bytes);
        char[] chars = new char[RANDOM_CHARS];
        for (int i = 0; i < RANDOM_CHARS; i++) {
            chars[i] = BASE32[bytes[i] & 31];
        }
        String random = new String(chars);
        return shared ? "exec_" + instance + "_" + random : "exec_" + random;
    }

    /** This replica's instance id (kept in its data dir, the same after a restart). */
    public String instance() {
        return instance;
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
