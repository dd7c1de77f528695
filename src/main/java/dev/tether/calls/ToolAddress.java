package dev.tether.calls;

import java.util.Optional;

import dev.tether.identity.Principal;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/**
 * A parsed tool address: {@code tools.<integration>.<owner>.<connection>.<tool>}, where the tool's name may have dots.
 * An address names a connection as its caller sees it: {@code user} is the caller's own ({@link #connection(Principal)}).
 */
public record ToolAddress(Owner owner, String integration, String name, String tool) {

    static ToolAddress parse(String address) {
        String[] parts = address == null ? new String[0] : address.split("\\.", -1);
        if (parts.length < 5 || !parts[0].equals("tools")) {
            throw new ToolNotFoundException(String.valueOf(address), "expected tools.<integration>.<owner>.<connection>.<tool>");
        }
        Optional<Owner> owner = Owner.parse(parts[2]);
        if (owner.isEmpty()) {
            throw new ToolNotFoundException(address, "owner must be org or user, was " + parts[2]);
        }
        // An OpenAPI or GraphQL tool's name is a dotted path (group.leaf, query.field): the rest of the address.
        String tool = String.join(".", java.util.Arrays.asList(parts).subList(4, parts.length));
        if (tool.isEmpty() || tool.startsWith(".") || tool.endsWith(".") || tool.contains("..")) {
            throw new ToolNotFoundException(address, "the tool name is empty or has an empty segment");
        }
        return new ToolAddress(owner.get(), parts[1], parts[3], tool);
    }

    /** The address, when {@code address} is one of a connection's tools; empty for anything else. */
    public static Optional<ToolAddress> of(String address) {
        try {
            return Optional.of(parse(address));
        }
        catch (ToolNotFoundException notAnAddress) {
            return Optional.empty();
        }
    }

    /** The connection {@code caller} means: the organisation's, or its own. */
    public ConnectionKey connection(Principal caller) {
        return ConnectionKey.of(owner, integration, name, caller);
    }

    /**
     * The path that code writes after {@code tools.} and that policies match, for what a caller names a tool by:
     * {@code tools.github.org.main.getRepo}, {@code github.org.main.getRepo} and Executor's CLI's
     * {@code tools.tools.github.org.main.getRepo} are all {@code github.org.main.getRepo}; {@code tools.search} is
     * {@code search}; a built-in's {@code executor.coreTools.…} stays as it is.
     */
    public static String path(String name) {
        String path = name;
        while (true) {
            if (of(path).isPresent()) {
                return path.substring("tools.".length());
            }
            if (!path.startsWith("tools.")) {
                return path;
            }
            path = path.substring("tools.".length());
        }
    }
}
