package dev.tether.store.storage;

import java.util.Optional;

import org.springframework.r2dbc.core.DatabaseClient.GenericExecuteSpec;

/** Binding optional values, which R2DBC wants as a typed null when absent. */
final class SqlBinds {

    private SqlBinds() {
    }

    static <T> GenericExecuteSpec nullable(GenericExecuteSpec spec, String name, Optional<T> value, Class<T> type) {
        return value.isPresent() ? spec.bind(name, value.get()) : spec.bindNull(name, type);
    }
}
