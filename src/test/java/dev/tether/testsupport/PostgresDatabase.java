package dev.tether.testsupport;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The PostgreSQL server tests use, from {@code TETHER_TEST_POSTGRES} ({@code host:port/database}),
 * {@code TETHER_TEST_POSTGRES_USER} and {@code TETHER_TEST_POSTGRES_PASSWORD}; {@code .ci/run} sets them.
 */
public record PostgresDatabase(String hostPortDatabase, String user, String password) {

    public static Optional<PostgresDatabase> fromEnvironment() {
        String location = System.getenv("TETHER_TEST_POSTGRES");
        if (location == null || location.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(new PostgresDatabase(location, System.getenv().getOrDefault("TETHER_TEST_POSTGRES_USER", "tether"),
                System.getenv().getOrDefault("TETHER_TEST_POSTGRES_PASSWORD", "tether")));
    }

    public String jdbcUrl(String schema) {
        return "jdbc:postgresql://" + hostPortDatabase + "?currentSchema=" + schema;
    }

    public String r2dbcUrl(String schema) {
        return "r2dbc:postgresql://" + hostPortDatabase + "?schema=" + schema;
    }

    /**
     * The environment that points a packaged daemon's store (both URLs and their users) at {@code schema}, with the store
     * key every daemon on it shares, as replicas must.
     */
    public java.util.Map<String, String> daemonEnvironment(String schema) {
        return java.util.Map.of(
                "TETHER_STORE_SECRET_KEY", storeKey(schema),
                "TETHER_STORE_R2DBC_URL", r2dbcUrl(schema),
                "SPRING_R2DBC_USERNAME", user, "SPRING_R2DBC_PASSWORD", password,
                "TETHER_STORE_JDBC_URL", jdbcUrl(schema),
                "SPRING_FLYWAY_USER", user, "SPRING_FLYWAY_PASSWORD", password);
    }

    /**
     * The store key (base64 of 32 bytes) of the daemons on {@code schema}: one per schema, the same for each of its
     * replicas, which must share it to open each other's sealed values and to prove themselves to each other.
     */
    public static String storeKey(String schema) {
        try {
            return java.util.Base64.getEncoder().encodeToString(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(("tether test store key " + schema).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        catch (java.security.NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** A fresh schema, so tests never see each other's rows. */
    public String createSchema(String prefix) {
        String schema = prefix + "_" + Long.toHexString(System.nanoTime());
        try (Connection connection = DriverManager.getConnection("jdbc:postgresql://" + hostPortDatabase, user, password)) {
            connection.createStatement().execute("CREATE SCHEMA " + schema);
            return schema;
        }
        catch (SQLException ex) {
            throw new IllegalStateException("cannot create schema on " + hostPortDatabase, ex);
        }
    }

    /** Drops {@code schema} and all it holds: for a benchmark, which leaves nothing behind. */
    public void dropSchema(String schema) {
        try (Connection connection = DriverManager.getConnection("jdbc:postgresql://" + hostPortDatabase, user, password)) {
            connection.createStatement().execute("DROP SCHEMA " + schema + " CASCADE");
        }
        catch (SQLException ex) {
            throw new IllegalStateException("cannot drop schema " + schema + " on " + hostPortDatabase, ex);
        }
    }

    /** The condition behind {@link RequiresPostgres}. */
    public static final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return Prerequisites.condition(fromEnvironment().isPresent(), "no PostgreSQL: TETHER_TEST_POSTGRES is unset",
                    ".ci/run starts one and sets it", context);
        }
    }
}
