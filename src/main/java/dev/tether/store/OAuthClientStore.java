package dev.tether.store;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * OAuth clients, their secrets sealed. Read from the database each time: they are needed only to authorize. A caller
 * sees the organisation's clients and its own ({@code store.storage.OwnerScope}); only an admin changes the organisation's.
 */
public interface OAuthClientStore {

    /** Saves the client, replacing one of the same owner, subject and slug (Executor's upsert). */
    Mono<OAuthClient> saveClient(OAuthClient client);

    /** The client of this owner and subject ({@code ""} for the organisation's); empty when the caller does not see it. */
    Mono<OAuthClient> client(Owner owner, String subject, String slug);

    /** The clients the caller sees. */
    Flux<OAuthClient> clients();

    /** Emits whether it existed. Connections authorized through it keep their tokens until the next refresh fails. */
    Mono<Boolean> removeClient(Owner owner, String subject, String slug);
}
