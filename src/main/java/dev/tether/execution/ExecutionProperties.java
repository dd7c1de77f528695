package dev.tether.execution;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
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
 * @param maxConcurrent   executions whose code runs or awaits tool calls at once; default 64
 * @param maxQueued       executions that may wait for one of those places; beyond, an execution is refused at once;
 *                        default 64
 * @param maxPendingCalls tool calls one execution may have started and not yet seen settle; default 1000
 * @param maxParkedCalls  tool calls one execution may have waiting for an approval; default 64
 * @param maxMemory       what one execution may allocate once the heap is under pressure before it is stopped (see
 *                        {@link MemoryWatch}); default 64 MB, Executor's QuickJS limit
 * @param nice            the nice value of the threads that run code, 0 (the daemon's own priority) to 19 (the lowest,
 *                        the default): code then takes only the CPU that the daemon and the host leave
 * @param durable         whether a paused execution's journal goes to the store, so that it survives a restart and its
 *                        replica; default true. Off, code, tool answers and users' answers are never written anywhere
 * @param maxJournal      bound on one execution's journal; past it the execution goes on, but its pauses live in memory
 *                        only; default 32 MB
 */
@ConfigurationProperties("tether.execution")
public record ExecutionProperties(Duration timeout, DataSize maxOutput, Integer maxStringLength, Integer maxPaused,
        Duration pausedExpiry, Integer maxConcurrent, Integer maxQueued, Integer maxPendingCalls, Integer maxParkedCalls,
        DataSize maxMemory, Integer nice, Boolean durable, DataSize maxJournal) {

    public ExecutionProperties(@Nullable Duration timeout, @Nullable DataSize maxOutput,
            @Nullable Integer maxStringLength, @Nullable Integer maxPaused, @Nullable Duration pausedExpiry,
            @Nullable Integer maxConcurrent, @Nullable Integer maxQueued, @Nullable Integer maxPendingCalls,
            @Nullable Integer maxParkedCalls, @Nullable DataSize maxMemory, @Nullable Integer nice,
            @Nullable Boolean durable, @Nullable DataSize maxJournal) {
        timeout = PropertyChecks.positive("tether.execution.timeout", timeout, Duration.ofMinutes(5));
        maxOutput = maxOutput == null ? DataSize.ofMegabytes(1) : maxOutput;
        if (maxOutput.toBytes() < 1 || maxOutput.toBytes() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tether.execution.max-output must be between 1B and 2GB, was " + maxOutput);
        }
        maxStringLength = PropertyChecks.atLeastOne("tether.execution.max-string-length", maxStringLength, 16 * 1024 * 1024);
        maxPaused = PropertyChecks.atLeastOne("tether.execution.max-paused", maxPaused, 64);
        pausedExpiry = PropertyChecks.positive("tether.execution.paused-expiry", pausedExpiry, Duration.ofMinutes(15));
        maxConcurrent = PropertyChecks.atLeastOne("tether.execution.max-concurrent", maxConcurrent, 64);
        maxQueued = maxQueued == null ? 64 : maxQueued;
        if (maxQueued < 0) {
            throw new IllegalArgumentException("tether.execution.max-queued must not be negative, was " + maxQueued);
        }
        maxPendingCalls = PropertyChecks.atLeastOne("tether.execution.max-pending-calls", maxPendingCalls, 1000);
        maxParkedCalls = PropertyChecks.atLeastOne("tether.execution.max-parked-calls", maxParkedCalls, 64);
        maxMemory = maxMemory == null ? DataSize.ofMegabytes(64) : maxMemory;
        if (maxMemory.toBytes() < DataSize.ofMegabytes(1).toBytes()) {
            throw new IllegalArgumentException("tether.execution.max-memory must be at least 1MB, was " + maxMemory);
        }
        nice = nice == null ? 19 : nice;
        if (nice < 0 || nice > 19) {
            throw new IllegalArgumentException("tether.execution.nice must be between 0 and 19, was " + nice);
        }
        durable = durable == null || durable;
        maxJournal = maxJournal == null ? DataSize.ofMegabytes(32) : maxJournal;
        if (maxJournal.toBytes() < DataSize.ofKilobytes(1).toBytes()) {
            throw new IllegalArgumentException("tether.execution.max-journal must be at least 1KB, was " + maxJournal);
        }
        this.timeout = timeout;
        this.maxOutput = maxOutput;
        this.maxStringLength = maxStringLength;
        this.maxPaused = maxPaused;
        this.pausedExpiry = pausedExpiry;
        this.maxConcurrent = maxConcurrent;
        this.maxQueued = maxQueued;
        this.maxPendingCalls = maxPendingCalls;
        this.maxParkedCalls = maxParkedCalls;
        this.maxMemory = maxMemory;
        this.nice = nice;
        this.durable = durable;
        this.maxJournal = maxJournal;
    }

    public static ExecutionProperties defaults() {
        return new ExecutionProperties(null, null, null, null, null, null, null, null, null, null, null, null, null);
    }
}
