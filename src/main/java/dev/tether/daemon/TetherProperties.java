package dev.tether.daemon;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;

/**
 * Settings shared by every package.
 *
 * @param dataDir   where Tether keeps its token, instance id, child ledger and store; {@code ~/.tether}
 *                  unless {@code TETHER_DATA_DIR} says otherwise
 * @param readyLine print {@code EXECUTOR_READY:<port>} on stdout once the API answers, the line the Executor desktop
 *                  app waits for from its sidecar; default false ({@code bin/executor-sidecar} sets it)
 */
@ConfigurationProperties("tether")
public record TetherProperties(Path dataDir, Boolean readyLine) {

    @ConstructorBinding
    public TetherProperties(@Nullable Path dataDir, @Nullable Boolean readyLine) {
        if (dataDir == null) {
            dataDir = Path.of(System.getProperty("user.home"), ".tether");
        }
        readyLine = readyLine != null && readyLine;
        this.dataDir = dataDir;
        this.readyLine = readyLine;
    }

    /** For tests and tools that need only the data dir. */
    public TetherProperties(@Nullable Path dataDir) {
        this(dataDir, false);
    }
}
