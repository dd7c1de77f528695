/**
 * Secrets at rest: every secret value the store keeps (a server config's {@code env}, {@code headers} and
 * {@code queryParams}, credentials, plugin settings, OAuth client secrets, refresh tokens, execution journals) is sealed
 * with AES-256-GCM under the store key ({@code SecretBox}), bound to its row and field ({@code SecretSlot}). A start
 * checks that every stored value opens with the key in use ({@code SecretsAtRest}, over {@code StoredSecrets});
 * migration V42 bound the values an older Tether sealed to their rows, once. Other features derive keys of their own
 * from the store key ({@code StoreKeys}).
 *
 * <p>It uses the store's records to name a value's row; {@code store.storage} seals and opens through it. Public is only
 * what the storage seals with, the start's check that its migration runs, and the derived keys.
 */
@NullMarked
package dev.tether.store.secrets;

import org.jspecify.annotations.NullMarked;
