/**
 * The store as every feature sees it: its records (integrations, connections, credentials' names, catalogs, verdicts,
 * policies, OAuth clients and grants), the store interfaces they are read and written through, their exceptions and
 * {@code tether.store.*}. Where the rows are kept is {@code store.storage}'s business, which implements these interfaces.
 *
 * <p>The sealing of secrets at rest ({@code SecretBox}, {@code SecretSlot}, {@code StoredSecrets},
 * {@code SecretsAtRest}, migration V42) is here too, for now.
 */
@NullMarked
package dev.tether.store;

import org.jspecify.annotations.NullMarked;
