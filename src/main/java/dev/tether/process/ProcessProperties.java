package dev.tether.process;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;

import dev.tether.daemon.PropertyChecks;
import org.springframework.util.unit.DataSize;

/**
 * How stdio children are torn down and observed.
 *
 * @param eofGrace        how long a child may take to exit after its stdin is closed; default 1 s
 * @param termGrace       how long the tree may take to exit after SIGTERM; default 2 s. For a docker child, also the
 *                        time its server gets between the engine's SIGTERM and SIGKILL when its container is stopped
 * @param killGrace       how long to wait for the tree to vanish after SIGKILL before reporting survivors; default 2 s
 * @param stderrTail      how much of a child's most recent stderr is kept for errors and logs; default 8 KB
 * @param shutdownTimeout how long daemon shutdown waits for in-flight teardowns; default 15 s
 * @param passEnv         names of the daemon's environment variables children inherit beyond the built-in few
 *                        ({@code PATH}, {@code HOME}, locale, time zone, {@code DOCKER_*}); default none. Names
 *                        starting with {@code TETHER_} or {@code SPRING_} are refused at start.
 * @param dockerStopGrace how long a docker child's client may take to exit by itself once the engine is asked to end
 *                        its container, including the time the engine takes to create a container the client is still
 *                        asking for; default 15 s, about the time 20 containers took to be created at once on a busy
 *                        2-core machine
 * @param stdoutBufferLines lines a child may write to stdout ahead of Tether's reading before its session fails
 *                        and the child is torn down; default 10000
 * @param stdoutBuffer    the same bound in bytes, which also bounds one line; default 16 MB
 */
@ConfigurationProperties("tether.process")
public record ProcessProperties(Duration eofGrace, Duration termGrace, Duration killGrace, DataSize stderrTail,
        Duration shutdownTimeout, List<String> passEnv, Duration dockerStopGrace, Integer stdoutBufferLines,
        DataSize stdoutBuffer) {

    @ConstructorBinding
    public ProcessProperties(@Nullable Duration eofGrace, @Nullable Duration termGrace, @Nullable Duration killGrace,
            @Nullable DataSize stderrTail, @Nullable Duration shutdownTimeout, @Nullable List<String> passEnv,
            @Nullable Duration dockerStopGrace, @Nullable Integer stdoutBufferLines, @Nullable DataSize stdoutBuffer) {
        passEnv = passEnv == null ? List.of() : List.copyOf(passEnv);
        passEnv.stream().filter(ChildEnvironment::forbidden).findFirst().ifPresent(name -> {
            throw new IllegalArgumentException("tether.process.pass-env must not list " + name
                    + ": TETHER_* and SPRING_* variables configure Tether and never reach a child");
        });
        stdoutBufferLines = PropertyChecks.atLeastOne("tether.process.stdout-buffer-lines", stdoutBufferLines, 10_000);
        stdoutBuffer = stdoutBuffer == null ? DataSize.ofMegabytes(16) : stdoutBuffer;
        if (stdoutBuffer.toBytes() < 1024) {
            throw new IllegalArgumentException("tether.process.stdout-buffer must be at least 1KB, was " + stdoutBuffer);
        }
        eofGrace = PropertyChecks.positive("tether.process.eof-grace", eofGrace, Duration.ofSeconds(1));
        termGrace = PropertyChecks.positive("tether.process.term-grace", termGrace, Duration.ofSeconds(2));
        dockerStopGrace = PropertyChecks.positive("tether.process.docker-stop-grace", dockerStopGrace, Duration.ofSeconds(15));
        killGrace = PropertyChecks.positive("tether.process.kill-grace", killGrace, Duration.ofSeconds(2));
        shutdownTimeout = PropertyChecks.positive("tether.process.shutdown-timeout", shutdownTimeout, Duration.ofSeconds(15));
        stderrTail = stderrTail == null ? DataSize.ofKilobytes(8) : stderrTail;
        if (stderrTail.toBytes() < 256 || stderrTail.toBytes() > DataSize.ofMegabytes(1).toBytes()) {
            throw new IllegalArgumentException("tether.process.stderr-tail must be between 256B and 1MB, was " + stderrTail);
        }
        this.eofGrace = eofGrace;
        this.termGrace = termGrace;
        this.killGrace = killGrace;
        this.stderrTail = stderrTail;
        this.shutdownTimeout = shutdownTimeout;
        this.passEnv = passEnv;
        this.dockerStopGrace = dockerStopGrace;
        this.stdoutBufferLines = stdoutBufferLines;
        this.stdoutBuffer = stdoutBuffer;
    }

    /** The graces and bounds of any child, with no inherited names and the defaults of the rest. */
    public ProcessProperties(@Nullable Duration eofGrace, @Nullable Duration termGrace, @Nullable Duration killGrace,
            @Nullable DataSize stderrTail, @Nullable Duration shutdownTimeout) {
        this(eofGrace, termGrace, killGrace, stderrTail, shutdownTimeout, null, null, null, null);
    }

    ChildPipes.StdoutBound stdoutBound() {
        return new ChildPipes.StdoutBound(stdoutBufferLines, stdoutBuffer.toBytes());
    }

    /** The defaults, for code that builds a pipeline outside Spring (tests, benchmarks). */
    public static ProcessProperties defaults() {
        return new ProcessProperties(null, null, null, null, null);
    }
}
