package dev.tether.onepassword;

import java.util.HashMap;
import java.util.Map;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;
import dev.tether.calls.builtin.InvalidToolArgumentsException;

/** The {@code executor.onepassword.*} built-ins over {@link OnePassword}, answering as Executor's plugin does. */
@Component
final class OnePasswordBuiltins implements BuiltinHandlers {

    private static final String TOOLS = "executor.onepassword.";

    private final OnePassword onePassword;

    OnePasswordBuiltins(OnePassword onePassword) {
        this.onePassword = onePassword;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of(
                TOOLS + "status", (tool, args) -> onePassword.status().map(status -> (Object) status),
                TOOLS + "getConfig", (tool, args) -> onePassword.config().map(config -> {
                    Map<String, Object> answer = new HashMap<>();
                    answer.put("config", config.orElse(null));
                    return answer;
                }),
                TOOLS + "listVaults", (tool, args) -> Mono.fromCallable(() -> OnePasswordAuth.of(args).orElseThrow(() ->
                                new InvalidToolArgumentsException("Expected { kind: \"desktop-app\", accountName } | { kind: \"service-account\", token }")))
                        .flatMap(onePassword::vaults)
                        .map(vaults -> Map.of("vaults", vaults)),
                TOOLS + "configure", (tool, args) -> Mono.fromCallable(() -> OnePasswordConfig.of(args).orElseThrow(() ->
                                new InvalidToolArgumentsException("Expected { auth, vaultId: string, name: string }")))
                        .flatMap(onePassword::configure)
                        .thenReturn(Map.of("configured", true)),
                TOOLS + "removeConfig", (tool, args) -> onePassword.removeConfig().thenReturn(Map.of("removed", true)));
    }
}
