package dev.tether.store;

import dev.tether.testsupport.PostgresDatabase;
import dev.tether.testsupport.RequiresPostgres;

/** The store held in memory over one real PostgreSQL, shared by the test's replicas as in a scaled deployment. */
@RequiresPostgres
class PostgresMemoryStoreTest extends MemoryStoreContract {

    @Override
    protected Database newDatabase() {
        PostgresDatabase postgres = PostgresDatabase.fromEnvironment().orElseThrow();
        String schema = postgres.createSchema("memory_test");
        return new Database(postgres.jdbcUrl(schema), postgres.r2dbcUrl(schema), postgres.user(), postgres.password());
    }
}
