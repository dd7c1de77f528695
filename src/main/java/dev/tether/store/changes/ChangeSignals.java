package dev.tether.store.changes;

import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Wrapped;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * PostgreSQL's {@code LISTEN/NOTIFY} for the change log: each row a replica adds to {@code store_change} is announced
 * on one channel, and a replica listening there reads the log at once instead of polling it. The log stays the
 * record of what changed: a notification only says "look now", so one lost while the listening connection was down
 * costs nothing but the wait until it is back (a look follows every {@code LISTEN}).
 */
@Component
public final class ChangeSignals {

    static final String CHANNEL = "tether_store_change";

    private final DatabaseClient db;
    private final boolean postgres;

    ChangeSignals(DatabaseClient db) {
        this.db = db;
        this.postgres = announces(db);
    }

    /** Whether the database under {@code db} is PostgreSQL, whose writes to the log announce themselves. */
    static boolean announces(DatabaseClient db) {
        return "PostgreSQL".equals(db.getConnectionFactory().getMetadata().getName());
    }

    /** Whether this store can announce its changes; other stores are polled. */
    public boolean available() {
        return postgres;
    }

    /**
     * Emits once when listening has begun and once per announced change, on a connection of its own that lives as
     * long as the subscription; errors when that connection is lost.
     */
    public Flux<Object> wakeups() {
        if (!postgres) {
            return Flux.error(new IllegalStateException("only PostgreSQL announces changes"));
        }
        // Not from the pool: this connection is held for good, and LISTEN belongs to the session that ran it.
        return Flux.usingWhen(Mono.from(unpooled(db.getConnectionFactory()).create()),
                connection -> {
                    PostgresqlConnection listening = (PostgresqlConnection) connection;
                    // The first wakeup only once notifications are subscribed to: a change committed between the two
                    // is then either announced or seen by the look the first wakeup starts.
                    return listening.createStatement("LISTEN " + CHANNEL).execute().flatMap(result -> result.getRowsUpdated())
                            .thenMany(Flux.<Object>merge(listening.getNotifications(), Mono.just(CHANNEL)));
                },
                Connection::close);
    }

    private static ConnectionFactory unpooled(ConnectionFactory factory) {
        ConnectionFactory current = factory;
        while (current instanceof Wrapped<?> wrapped && wrapped.unwrap() instanceof ConnectionFactory inner) {
            current = inner;
        }
        return current;
    }
}
