package dev.tether.store;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Whether the database still answers: one trivial statement through the same connection pool the store uses. */
@Component
public final class StoreProbe {

    private final DatabaseClient db;

    StoreProbe(DatabaseClient db) {
        this.db = db;
    }

    /** Completes when the database answered; embedded H2 runs on the caller's thread, so not on a non-blocking one. */
    public Mono<Void> probe() {
        return db.sql("SELECT 1").fetch().rowsUpdated().then().subscribeOn(Schedulers.boundedElastic());
    }
}
