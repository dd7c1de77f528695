package dev.tether.policy;

/** No policy of this owner has this id. */
public final class PolicyNotFoundException extends RuntimeException {

    private final String id;

    PolicyNotFoundException(String id) {
        super("no policy '" + id + "'");
        this.id = id;
    }

    public String id() {
        return id;
    }
}
