package dev.tether.docker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import dev.tether.daemon.DataDir;
import dev.tether.daemon.TetherProperties;

/**
 * This daemon's identity on the Docker engine. It is kept in the data dir so that a restarted daemon
 * recognises, by label, the containers its previous run left behind.
 */
@Component
public final class InstanceId {

    private final String value;

    @Autowired
    public InstanceId(TetherProperties tether) {
        this(tether.dataDir().resolve("instance-id"));
    }

    InstanceId(Path file) {
        this.value = readOrCreate(file);
    }

    public String value() {
        return value;
    }

    private static String readOrCreate(Path file) {
        try {
            if (Files.exists(file)) {
                String stored = Files.readString(file).strip();
                if (stored.matches("[0-9a-f]{8}")) {
                    return stored;
                }
            }
            byte[] bytes = new byte[4];
            new SecureRandom().nextBytes(bytes);
            String created = HexFormat.of().formatHex(bytes);
            DataDir.writeOwnerOnly(file, created + "\n");
            return created;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read or create the instance id at " + file, ex);
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
