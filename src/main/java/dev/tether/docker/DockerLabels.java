package dev.tether.docker;

/** The labels and names Tether puts on the containers it starts. */
final class DockerLabels {

    static final String INSTANCE = "tether.instance";
    static final String SESSION = "tether.session";

    private DockerLabels() {
    }

    static String containerName(String instanceId, String childId) {
        return "tether-" + instanceId + "-" + childId;
    }
}
