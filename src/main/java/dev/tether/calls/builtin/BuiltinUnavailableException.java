package dev.tether.calls.builtin;

/**
 * A listed built-in whose feature this server does not provide (no {@link BuiltinHandlers} bean answers it): Executor's
 * {@code PluginNotLoadedError}, the answer of a daemon whose configuration lacks the tool's plugin. Never a made-up
 * success.
 */
public final class BuiltinUnavailableException extends RuntimeException {

    private final String address;
    private final String pluginId;

    public BuiltinUnavailableException(BuiltinTool tool) {
        super("Tool " + tool.path() + " is not available on this server: its plugin " + tool.pluginId() + " is not loaded");
        this.address = tool.path();
        this.pluginId = tool.pluginId();
    }

    /** The tool's address as Executor reports it, e.g. {@code executor.coreTools.oauth.start}. */
    public String address() {
        return address;
    }

    public String pluginId() {
        return pluginId;
    }
}
