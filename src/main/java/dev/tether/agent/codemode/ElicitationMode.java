package dev.tether.agent.codemode;

import java.util.Arrays;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Who answers a paused execution's question on {@code /mcp} ({@code ?elicitation_mode=}, read when the session
 * starts): the model through {@code resume} (the default, as in Executor, also for a value it does not know), the
 * user in the web UI at an approval URL, or the agent's client through MCP's own {@code elicitation/create}.
 */
enum ElicitationMode {
    MODEL, BROWSER, NATIVE;

    static ElicitationMode of(@Nullable String asked) {
        return Arrays.stream(values()).filter(mode -> mode.name().toLowerCase(Locale.ROOT).equals(asked)).findFirst().orElse(MODEL);
    }
}
