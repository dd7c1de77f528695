package dev.tether.execution;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import dev.tether.daemon.PropertyChecks;

/**
 * Code executions ({@code POST /api/executions}).
 *
 * @param timeout         bound on one run of the code between pauses, its tool calls included; default 5 min
 *                        (Executor's)
 * @param maxOutput       bound on what the code prints and returns, each; default 1 MB
 * @param maxStringLength longest string the code may build, in characters; default 16 Mi
 * @param maxPaused       executions that may wait for approval at once; default 64
 * @param pausedExpiry    how long a paused execution waits for its resume; default 15 min
 */
@ConfigurationProperties("tether.execution")
public record ExecutionProperties(Duration timeout, DataSize maxOutput, Integer maxStringLength, Integer maxPaused,
        Duration pausedExpiry) {

    public ExecutionProperties {
        timeout = PropertyChecks.positive("tether.execution.timeout", timeout, Duration.ofMinutes(5));
        maxOutput = maxOutput == null ? DataSize.ofMegabytes(1) : maxOutput;
        if (maxOutput.toBytes() < 1 || maxOutput.toBytes() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tether.execution.max-output must be between 1B and 2GB, was " + maxOutput);
        }
        maxStringLength = PropertyChecks.atLeastOne("tether.execution.max-string-length", maxStringLength, 16 * 1024 * 1024);
        maxPaused = PropertyChecks.atLeastOne("tether.execution.max-paused", maxPaused, 64);
        pausedExpiry = PropertyChecks.positive("tether.execution.paused-expiry", pausedExpiry, Duration.ofMinutes(15));
    }

    public static ExecutionProperties defaults() {
        return new ExecutionProperties(null, null, null, null, null);
    }
}
