package dev.tether.daemon;

import java.nio.file.Path;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings shared by every package.
 *
 * @param dataDir where Tether keeps its token, instance id, child ledger and store; {@code ~/.tether}
 *                unless {@code TETHER_DATA_DIR} says otherwise
 */
@ConfigurationProperties("tether")
public record TetherProperties(Path dataDir) {

    public TetherProperties {
        if (dataDir == null) {
            dataDir = Path.of(System.getProperty("user.home"), ".tether");
        }
    }
}
