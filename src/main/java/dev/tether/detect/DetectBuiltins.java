package dev.tether.detect;

import java.util.Map;

import org.springframework.stereotype.Component;

import dev.tether.calls.builtin.Arguments;
import dev.tether.calls.builtin.BuiltinHandler;
import dev.tether.calls.builtin.BuiltinHandlers;

/** The built-in {@code executor.coreTools.integrations.detect} over {@link IntegrationDetection}. */
@Component
final class DetectBuiltins implements BuiltinHandlers {

    private final IntegrationDetection detection;

    DetectBuiltins(IntegrationDetection detection) {
        this.detection = detection;
    }

    @Override
    public Map<String, BuiltinHandler> handlers() {
        return Map.of("executor.coreTools.integrations.detect", (tool, args) -> detection.detect(Arguments.of(tool, args).text("url"))
                .map(results -> Map.of("results", results)));
    }
}
