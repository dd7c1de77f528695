package dev.tether.store;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Tool policies: a caller sees the organisation's and its own ({@code store.storage.OwnerScope}), and only an admin changes the
 * organisation's.
 */
public interface PolicyStore {

    /** Every policy the caller sees, user ones first, each owner's in position order. */
    Flux<Policy> policies();

    Mono<Policy> create(Policy policy);

    /** The policy with this id, owner and subject; empty when there is none the caller sees. */
    Mono<Policy> find(Owner owner, String subject, String id);

    /** Replaces pattern, action, position and updatedAt of a stored policy; empty when there is none. */
    Mono<Policy> update(Policy policy);

    /** Whether a policy of this owner and subject was removed. */
    Mono<Boolean> delete(Owner owner, String subject, String id);
}
