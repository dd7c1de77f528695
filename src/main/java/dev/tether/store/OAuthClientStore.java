package dev.tether.store;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** OAuth clients, their secrets sealed. Read from the database each time: they are needed only to authorize. */
public interface OAuthClientStore {

    /** Saves the client, replacing one of the same owner and slug (Executor's upsert). */
    Mono<OAuthClient> saveClient(OAuthClient client);

    Mono<OAuthClient> client(Owner owner, String slug);

    Flux<OAuthClient> clients();

    /** Emits whether it existed. Connections authorized through it keep their tokens until the next refresh fails. */
    Mono<Boolean> removeClient(Owner owner, String slug);
}
