package dev.tether.calls.builtin;

import java.util.Map;
import java.util.Optional;

import dev.tether.identity.Principal;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/**
 * The arguments of a listed built-in, checked against what its input schema asks; a handler that finds them wrong
 * throws {@link InvalidToolArgumentsException}, which code receives as Executor's {@code invalid_tool_arguments}.
 */
public record Arguments(BuiltinTool tool, Map<?, ?> values) {

    public static Arguments of(BuiltinTool tool, Object arguments) {
        if (arguments == null) {
            return new Arguments(tool, Map.of());
        }
        if (!(arguments instanceof Map<?, ?> map)) {
            throw new InvalidToolArgumentsException(tool.path() + " expects an object");
        }
        return new Arguments(tool, map);
    }

    public String text(String field) {
        return optionalText(field).orElseThrow(() -> new InvalidToolArgumentsException("`" + field + "` is required"));
    }

    public Optional<String> optionalText(String field) {
        Object value = values.get(field);
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof String text)) {
            throw new InvalidToolArgumentsException("`" + field + "` must be a string");
        }
        return Optional.of(text);
    }

    public Optional<Owner> optionalOwner(String field) {
        return optionalText(field).map(text -> Owner.parse(text)
                .orElseThrow(() -> new InvalidToolArgumentsException("`" + field + "` must be \"org\" or \"user\", was \"" + text + "\"")));
    }

    /** The connection {@code caller} names by {@code owner}, {@code integration} and {@code name}: {@code user} is its own. */
    public ConnectionKey connectionKey(Principal caller) {
        Owner owner = optionalOwner("owner").orElseThrow(() -> new InvalidToolArgumentsException("`owner` is required"));
        return ConnectionKey.of(owner, text("integration"), text("name"), caller);
    }
}
