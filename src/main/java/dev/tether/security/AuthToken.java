package dev.tether.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.DataDir;

import dev.tether.daemon.TetherProperties;

/**
 * The daemon's bearer token, stored as Executor stores it: {@code {"token": "..."}} in
 * {@code <dataDir>/server-control/auth.json}, readable by the owner only.
 */
@Component
public final class AuthToken {

    private final byte[] token;

    public AuthToken(TetherProperties tether, ApiProperties properties, JsonMapper json) {
        String value = properties.token() != null && !properties.token().isBlank() ? properties.token()
                : readOrCreate(tether.dataDir().resolve("server-control").resolve("auth.json"), json);
        this.token = value.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The token itself, for the one record that must carry it: the discovery record Executor's CLI reads to reach
     * this daemon. Never log it or put it in an answer.
     */
    public String bearer() {
        return new String(token, StandardCharsets.UTF_8);
    }

    /** Compares in constant time, so the response time says nothing about how much of a guess was right. */
    public boolean matches(@Nullable String candidate) {
        return candidate != null && MessageDigest.isEqual(token, candidate.getBytes(StandardCharsets.UTF_8));
    }

    private static String readOrCreate(Path file, JsonMapper json) {
        try {
            if (Files.exists(file)) {
                Object stored = json.readValue(Files.readString(file), Map.class).get("token");
                if (stored instanceof String text && !text.isBlank()) {
                    return text;
                }
            }
            byte[] random = new byte[32];
            new SecureRandom().nextBytes(random);
            String created = HexFormat.of().formatHex(random);
            DataDir.writeOwnerOnly(file, json.writeValueAsString(Map.of("token", created)));
            return created;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("cannot read or create the API token at " + file, ex);
        }
    }
}
