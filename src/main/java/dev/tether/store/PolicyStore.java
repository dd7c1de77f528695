package dev.tether.store;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Tool policies. */
public interface PolicyStore {

    /** Every policy, user ones first, each owner's in position order. */
    Flux<Policy> policies();

    Mono<Policy> create(Policy policy);

    /** The policy with this id and owner; empty when there is none. */
    Mono<Policy> find(Owner owner, String id);

    /** Replaces pattern, action, position and updatedAt of a stored policy; empty when there is none. */
    Mono<Policy> update(Policy policy);

    /** Whether a policy of this owner was removed. */
    Mono<Boolean> delete(Owner owner, String id);
}
