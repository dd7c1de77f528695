package dev.tether.store.storage;

import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/** The store contract on a real PostgreSQL server, each test in a schema of its own. */
@RequiresPostgres
class PostgresStoreTest extends StoreContract {

    @Override
    protected Database newDatabase() {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("store_test");
        return new Database(postgres.jdbcUrl(schema), postgres.r2dbcUrl(schema), postgres.user(), postgres.password());
    }
}
