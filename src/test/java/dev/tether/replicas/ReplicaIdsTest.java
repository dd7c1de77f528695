package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** Names of paused executions and agent sessions: random alone, naming their replica beside others. */
class ReplicaIdsTest {

    private final ReplicaIds alone = new ReplicaIds("0a1b2c3d", false);
    private final ReplicaIds here = new ReplicaIds("0a1b2c3d", true);
    private final ReplicaIds there = new ReplicaIds("9f8e7d6c", true);

    @Test
    void aReplicaAloneOnItsStoreNamesExecutionsAtRandom() {
        assertThat(alone.execution()).matches("exec_[a-z2-7]{26}").isNotEqualTo(alone.execution());
        assertThat(alone.session()).matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
        assertThat(alone.elsewhere(there.execution())).as("nobody else to ask").isEmpty();
    }

    @Test
    void besideOtherReplicasANameSaysWhichReplicaHoldsIt() {
        assertThat(here.execution()).matches("exec_0a1b2c3d_[a-z2-7]{26}");
        assertThat(here.session()).startsWith("0a1b2c3d.").hasSize(8 + 1 + 36);

        assertThat(there.elsewhere(here.execution())).contains("0a1b2c3d");
        assertThat(there.elsewhere(here.session())).contains("0a1b2c3d");
        assertThat(here.elsewhere(here.execution())).as("its own").isEmpty();
        assertThat(here.elsewhere(here.session())).isEmpty();
    }

    /**
     * The ids' random part never collides: 200,000 ids from one replica before and after a restart (a new generator,
     * same instance) and from a replica alone are all distinct. A weak source (a counter, a seed that starts again, a
     * few dozen random bits) repeats long before this many; DurableExecutionsIT checks the packaged daemon mints these.
     */
    @Test
    void idsNeverRepeatAcrossRestartsAndReplicas() {
        ReplicaIds restarted = new ReplicaIds("0a1b2c3d", true);
        Set<String> randomParts = new HashSet<>();
        int each = 50_000;
        for (int i = 0; i < each; i++) {
            for (ReplicaIds ids : new ReplicaIds[] { here, restarted, there, alone }) {
                String id = ids.execution();
                randomParts.add(id.substring(id.length() - 26));
            }
        }
        assertThat(randomParts).as("distinct random parts").hasSize(4 * each);
    }

    @Test
    void namesThatNameNoReplicaStayWhereTheyArrive() {
        for (String id : new String[] { "exec_7", alone.execution(), alone.session(), "exec_0A1B2C3D_7", "exec_9f8e7d6c", "", "9f8e7d6c" }) {
            assertThat(here.elsewhere(id)).as(id).isEmpty();
        }
    }
}
