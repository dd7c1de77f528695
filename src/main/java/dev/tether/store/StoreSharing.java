package dev.tether.store;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.stereotype.Component;

/**
 * Whether other replicas can share this store: PostgreSQL can, an embedded H2 file (locked by this process) cannot.
 * What only matters between replicas (leases, reading the change log) runs only on a shared store.
 */
@Component
public final class StoreSharing {

    private final boolean shared;

    @Autowired
    StoreSharing(R2dbcProperties properties) {
        this(properties.getUrl() != null && properties.getUrl().contains(":postgresql:"));
    }

    StoreSharing(boolean shared) {
        this.shared = shared;
    }

    public boolean isShared() {
        return shared;
    }
}
