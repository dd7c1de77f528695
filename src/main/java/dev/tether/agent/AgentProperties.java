package dev.tether.agent;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;

/**
 * The agents' MCP server ({@code /mcp}, Executor's code mode).
 *
 * @param maxSessions            MCP sessions kept at once; beyond, the longest idle one is ended; default 1000
 * @param nativeElicitationTimeout how long a question relayed to the agent's client ({@code elicitation_mode=native})
 *                               waits for its answer before it is cancelled; default 60 s, the TypeScript SDK's request
 *                               timeout that Executor's relay runs under
 * @param browserApprovalWait    how long {@code resume} of {@code elicitation_mode=browser} waits for the user's
 *                               answer in the web UI before it says again where to answer; default 10 min (Executor's)
 * @param listTtl                how long an MCP 2026-07-28 client may keep a tool list ({@code ttlMs}) before it lists
 *                               again; changes reach its {@code subscriptions/listen} stream sooner; default 10 s
 */
@ConfigurationProperties("tether.agent")
public record AgentProperties(Integer maxSessions, Duration nativeElicitationTimeout, Duration browserApprovalWait,
        Duration listTtl) {

    public AgentProperties(@Nullable Integer maxSessions, @Nullable Duration nativeElicitationTimeout,
            @Nullable Duration browserApprovalWait, @Nullable Duration listTtl) {
        maxSessions = PropertyChecks.atLeastOne("tether.agent.max-sessions", maxSessions, 1000);
        nativeElicitationTimeout = PropertyChecks.positive("tether.agent.native-elicitation-timeout", nativeElicitationTimeout,
                Duration.ofSeconds(60));
        browserApprovalWait = PropertyChecks.positive("tether.agent.browser-approval-wait", browserApprovalWait, Duration.ofMinutes(10));
        listTtl = PropertyChecks.positive("tether.agent.list-ttl", listTtl, Duration.ofSeconds(10));
        this.maxSessions = maxSessions;
        this.nativeElicitationTimeout = nativeElicitationTimeout;
        this.browserApprovalWait = browserApprovalWait;
        this.listTtl = listTtl;
    }

    public static AgentProperties defaults() {
        return new AgentProperties(null, null, null, null);
    }
}
