package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Names of paused executions and agent sessions: Executor's own alone, naming their replica beside others. */
class ReplicaIdsTest {

    private final ReplicaIds alone = new ReplicaIds("0a1b2c3d", false);
    private final ReplicaIds here = new ReplicaIds("0a1b2c3d", true);
    private final ReplicaIds there = new ReplicaIds("9f8e7d6c", true);

    @Test
    void aReplicaAloneOnItsStoreNamesAsExecutorDoes() {
        assertThat(alone.pause(7)).isEqualTo("exec_7");
        assertThat(alone.session()).matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
        assertThat(alone.elsewhere(there.pause(1))).as("nobody else to ask").isEmpty();
    }

    @Test
    void besideOtherReplicasANameSaysWhichReplicaHoldsIt() {
        assertThat(here.pause(7)).isEqualTo("exec_0a1b2c3d_7");
        assertThat(here.session()).startsWith("0a1b2c3d.").hasSize(8 + 1 + 36);

        assertThat(there.elsewhere(here.pause(7))).contains("0a1b2c3d");
        assertThat(there.elsewhere(here.session())).contains("0a1b2c3d");
        assertThat(here.elsewhere(here.pause(7))).as("its own").isEmpty();
        assertThat(here.elsewhere(here.session())).isEmpty();
    }

    @Test
    void namesThatNameNoReplicaStayWhereTheyArrive() {
        for (String id : new String[] { "exec_7", alone.session(), "exec_0A1B2C3D_7", "exec_9f8e7d6c", "", "9f8e7d6c" }) {
            assertThat(here.elsewhere(id)).as(id).isEmpty();
        }
    }
}
