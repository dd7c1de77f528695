package dev.tether.store.leases;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import io.r2dbc.spi.Wrapped;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One database connection outside the pool every other statement shares, for statements that must never wait in line
 * behind load: opened when first needed, kept, and dropped when a statement on it fails or is given up on (the server
 * went away, the network cut it), so that the next opens another.
 */
final class OwnConnection {

    private final ConnectionFactory factory;
    private final AtomicReference<@Nullable Mono<Connection>> current = new AtomicReference<>();

    /** A connection of {@code pool}'s database, not one of the pool's. */
    OwnConnection(ConnectionFactory pool) {
        this.factory = pool instanceof Wrapped<?> wrapped && wrapped.unwrap() instanceof ConnectionFactory inner ? inner : pool;
    }

    /** How many rows {@code sql}, with {@code binds} set on it in order ({@code $1}, {@code $2}, …), updated. */
    Mono<Long> update(String sql, Object... binds) {
        return run(connection -> {
            Statement statement = connection.createStatement(sql);
            for (int i = 0; i < binds.length; i++) {
                statement.bind(i, binds[i]);
            }
            return Flux.from(statement.execute()).flatMap(Result::getRowsUpdated).reduce(0L, Long::sum);
        });
    }

    private <T> Mono<T> run(Function<Connection, Mono<T>> statement) {
        return Mono.defer(() -> {
            Mono<Connection> connection = Objects.requireNonNull(current.updateAndGet(open -> open != null ? open
                    : Mono.<Connection>from(factory.create()).cache(opened -> Duration.ofMillis(Long.MAX_VALUE), failed -> Duration.ZERO,
                            () -> Duration.ZERO)));
            // A statement that failed, or that its caller gave up on (no answer: the network lost the server), leaves
            // the connection in a state nobody knows: it goes, and the next statement opens another.
            return Mono.usingWhen(connection, statement, open -> Mono.empty(), (open, error) -> drop(connection),
                    open -> drop(connection));
        });
    }

    private Mono<Void> drop(Mono<Connection> failed) {
        return current.compareAndSet(failed, null)
                ? failed.flatMap(connection -> Mono.from(connection.close())).onErrorResume(closing -> Mono.empty()).then()
                : Mono.empty();
    }

    /** Closes the connection, if one is open. */
    Mono<Void> close() {
        Mono<Connection> open = current.getAndSet(null);
        return open == null ? Mono.empty()
                : open.flatMap(connection -> Mono.from(connection.close())).onErrorResume(closing -> Mono.empty()).then();
    }
}
