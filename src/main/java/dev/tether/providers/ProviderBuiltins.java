package dev.tether.providers;

import java.util.Map;

import org.springframework.stereotype.Component;

import dev.tether.calls.builtin.Arguments;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;

/** The built-ins {@code executor.coreTools.providers.list} and {@code .items} over {@link CredentialProviders}. */
@Component
final class ProviderBuiltins implements BuiltinHandlers {

    private final CredentialProviders providers;

    ProviderBuiltins(CredentialProviders providers) {
        this.providers = providers;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                "executor.coreTools.providers.list", (tool, args) -> providers.keys().collectList()
                        .map(keys -> Map.of("providers", keys)),
                "executor.coreTools.providers.items", (tool, args) -> providers.items(Arguments.of(tool, args).text("provider"))
                        .map(items -> Map.of("items", items)));
    }
}
