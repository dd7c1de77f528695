package dev.tether.store.changes;

import org.springframework.r2dbc.core.DatabaseClient;

/** The change log of a store, for tests that wire services by hand. */
public final class TestChanges {

    /** The log, its announcements and how far it was followed, as Spring wires them. */
    public record Log(StoreChanges changes, ChangeSignals signals, StorePosition position) {
    }

    private TestChanges() {
    }

    /** The log of the store {@code db} reaches (migrated by its owner), as one other replicas may share. */
    public static Log of(DatabaseClient db) {
        StoreChanges changes = new StoreChanges(db);
        return new Log(changes, new ChangeSignals(db), new StorePosition(changes));
    }
}
