package dev.tether.store.leases;

import org.springframework.r2dbc.core.DatabaseClient;

/** The replicas' leases, for tests that wire services by hand. */
public final class TestLeases {

    private TestLeases() {
    }

    /** The replicas' leases in the database {@code db} reaches (migrated by its owner), every statement on {@code db}. */
    public static InstanceLeases of(DatabaseClient db) {
        return new R2dbcInstanceLeases(db);
    }
}
