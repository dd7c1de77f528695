package dev.tether.calls.builtin;

import java.util.Map;
import java.util.function.Function;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.api.input.InvalidInputException;
import dev.tether.http.InvalidTemplateException;
import dev.tether.store.IntegrationAlreadyExistsException;

/**
 * Runs a built-in that is the twin of a route ({@code executor.openapi.addSpec} of {@code POST /api/openapi/specs}):
 * its arguments read as the route's body, the route's own checks applied (the feature keeps them beside its
 * built-ins, and the route's controller uses the same ones), and what the route refuses as input answered to code
 * as Executor's {@code invalid_tool_arguments}.
 */
@Component
public final class BuiltinArguments {

    private final JsonMapper json;

    BuiltinArguments(JsonMapper json) {
        this.json = json;
    }

    /** The arguments as the route's body type, then the route. */
    public <T> Mono<Object> run(BuiltinTool tool, Object arguments, Class<T> body, Function<T, Mono<?>> route) {
        return Mono.defer(() -> route.apply(read(tool, arguments, body)))
                .<Object>map(answer -> answer)
                .onErrorMap(InvalidInputException.class, refused -> new InvalidToolArgumentsException(refused.getMessage()))
                .onErrorMap(InvalidTemplateException.class, refused -> new InvalidToolArgumentsException(refused.getMessage()));
    }

    /** The failures of an {@code add} built-in that Executor names, answered to code as {@code {ok: false, error}}. */
    public static Mono<Object> naming(Mono<Object> call, Class<? extends RuntimeException> parse, String parseCode,
            Class<? extends RuntimeException> extraction, String extractionCode) {
        return call.onErrorMap(parse, failed -> new BuiltinToolFailure(parseCode, failed.getMessage()))
                .onErrorMap(extraction, failed -> new BuiltinToolFailure(extractionCode, failed.getMessage()))
                .onErrorMap(IntegrationAlreadyExistsException.class, exists -> new BuiltinToolFailure("integration_already_exists",
                        "Integration " + exists.slug() + " already exists; update it instead of re-adding."));
    }

    private <T> T read(BuiltinTool tool, Object arguments, Class<T> body) {
        if (arguments != null && !(arguments instanceof Map<?, ?>)) {
            throw new InvalidToolArgumentsException(tool.path() + " expects an object");
        }
        try {
            return json.convertValue(arguments == null ? Map.of() : arguments, body);
        }
        catch (JacksonException | IllegalArgumentException wrong) {
            throw new InvalidToolArgumentsException("the arguments of " + tool.path() + " do not fit its input schema: "
                    + (wrong instanceof JacksonException jackson ? jackson.getOriginalMessage() : wrong.getMessage()));
        }
    }
}
