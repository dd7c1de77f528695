package dev.tether.daemon;

/** The version Tether introduces itself with: to MCP servers and agents, in its API docs and its discovery manifest. */
public final class Version {

    /** Kept with the pom's. */
    public static final String TETHER = "0.1.0";

    private Version() {
    }
}
