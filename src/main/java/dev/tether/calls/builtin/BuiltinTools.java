package dev.tether.calls.builtin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The registry of Executor's built-in {@code executor} integration: the 33 tools Executor 1.5.9 lists (names,
 * descriptions, schemas and approval annotations in {@code executor-tools.json} beside this class, as its daemon
 * answers them) and the code runtime's helpers ({@code search}, {@code describe.tool}, {@code executor.sources.list}).
 * What each one does comes from the {@link BuiltinHandlers} beans of the feature packages, collected once every
 * singleton exists (so a feature may itself depend on what depends on this registry). A listed tool no feature
 * answers fails its calls with {@link BuiltinUnavailableException}.
 */
@Component
public final class BuiltinTools implements SmartInitializingSingleton {

    private final Map<String, BuiltinTool> tools = new LinkedHashMap<>();
    private final List<BuiltinTool> listed;
    private final Supplier<Stream<BuiltinHandlers>> contributions;
    private volatile @Nullable Map<String, BuiltinHandler> handlers;

    @Autowired
    public BuiltinTools(JsonMapper json, ObjectProvider<BuiltinHandlers> contributions) {
        this(json, contributions::orderedStream);
    }

    /** A registry of the given contributions, asked for once, at the first call or when the context is up. */
    public BuiltinTools(JsonMapper json, Supplier<Stream<BuiltinHandlers>> contributions) {
        this.contributions = contributions;
        this.listed = listedTools(json);
        listed.forEach(tool -> tools.put(tool.path(), tool));
        ToolDescriptions.RUNTIME.forEach((path, described) -> tools.put(path, new BuiltinTool(path, path, BuiltinTool.INTEGRATION,
                (String) Objects.requireNonNull(described.get("description")), null, null, null, null, true)));
    }

    @Override
    public void afterSingletonsInstantiated() {
        handlers();
    }

    /** The built-ins {@code GET /api/tools} lists, in Executor's order. */
    public List<BuiltinTool> listed() {
        return listed;
    }

    /** The built-in at {@code path} (no {@code tools.} prefix), listed or a runtime helper. */
    public Optional<BuiltinTool> find(String path) {
        return Optional.ofNullable(tools.get(path));
    }

    /**
     * Runs a built-in: a listed one answers its {@code data}, a runtime helper its value. Fails with
     * {@link InvalidToolArgumentsException} for arguments it cannot take, with {@link BuiltinUnavailableException}
     * when no feature of this server answers it.
     */
    public Mono<Object> run(BuiltinTool tool, Object arguments) {
        return Mono.defer(() -> {
            BuiltinHandler handler = handlers().get(tool.path());
            return handler == null ? Mono.error(new BuiltinUnavailableException(tool)) : handler.run(tool, arguments);
        });
    }

    /** Whether a feature of this server answers the built-in at {@code path}. */
    public boolean answers(String path) {
        return handlers().containsKey(path);
    }

    private Map<String, BuiltinHandler> handlers() {
        Map<String, BuiltinHandler> known = handlers;
        if (known == null) {
            synchronized (this) {
                known = handlers;
                if (known == null) {
                    known = collect();
                    handlers = known;
                }
            }
        }
        return known;
    }

    private Map<String, BuiltinHandler> collect() {
        Map<String, BuiltinHandler> collected = new HashMap<>();
        contributions.get().forEach(contribution -> contribution.handlers().forEach((path, handler) -> {
            if (!tools.containsKey(path)) {
                throw new IllegalStateException(contribution.getClass().getName() + " answers " + path
                        + ", which is not one of Executor's built-in tools");
            }
            if (collected.putIfAbsent(path, handler) != null) {
                throw new IllegalStateException("two features answer the built-in " + path);
            }
        }));
        tools.values().stream().filter(BuiltinTool::runtime).filter(tool -> !collected.containsKey(tool.path())).findFirst()
                .ifPresent(tool -> {
                    throw new IllegalStateException("no feature answers the runtime helper " + tool.path());
                });
        return Map.copyOf(collected);
    }

    private static List<BuiltinTool> listedTools(JsonMapper json) {
        try (InputStream in = BuiltinTools.class.getResourceAsStream("executor-tools.json")) {
            if (in == null) {
                throw new IllegalStateException("executor-tools.json is missing beside " + BuiltinTools.class.getName());
            }
            List<Map<String, Object>> rows = json.readValue(in, new TypeReference<>() { });
            return rows.stream().map(row -> new BuiltinTool((String) Objects.requireNonNull(row.get("path")),
                    (String) Objects.requireNonNull(row.get("name")), (String) Objects.requireNonNull(row.get("pluginId")),
                    (String) Objects.requireNonNull(row.get("description")), (Boolean) row.get("requiresApproval"),
                    (String) row.get("approvalDescription"), schema(row.get("inputSchema")), schema(row.get("outputSchema")), false))
                    .toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @SuppressWarnings("unchecked")
    private static @Nullable Map<String, Object> schema(@Nullable Object schema) {
        return (Map<String, Object>) schema;
    }
}
