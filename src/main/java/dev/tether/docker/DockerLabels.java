package dev.tether.docker;

/** The labels and names Tether puts on the containers it starts. */
final class DockerLabels {

    static final String INSTANCE = "tether.instance";
    static final String SESSION = "tether.session";
    /** A connection's fence key ({@code ChildSpec.fence}), where replicas share a store. */
    static final String CONNECTION = "tether.connection";

    private DockerLabels() {
    }

    static String containerName(String instanceId, String childId) {
        return "tether-" + instanceId + "-" + childId;
    }

    /** The one name every replica gives a connection's container: the engine refuses a second container by it. */
    static String fencedName(String fence) {
        return "tether-" + fence;
    }
}
