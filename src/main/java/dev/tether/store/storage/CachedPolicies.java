package dev.tether.store.storage;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.context.annotation.Primary;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.NotPermittedException;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyStore;
import dev.tether.store.changes.StoreChanges;

/**
 * Policies as the rest of Tether sees them. Every listing of tools and every call from code asks for them, so they
 * are read as a whole once and read again only after a change: one written here, or one another replica wrote,
 * which {@link MemoryStore} hears of in the change log (kind {@code policy}). The cache holds every user's; each
 * caller is answered the organisation's and its own ({@link OwnerScope}).
 */
@Primary
@Component
final class CachedPolicies implements PolicyStore {

    private final R2dbcPolicies database;
    private final OwnerScope scope;
    private final StoreChanges changes;
    /** Every policy as last read, or null until read again. */
    private @Nullable List<Policy> policies;
    /** Counts the changes, so that a read that raced one does not keep what it read. */
    private long changeCount;

    CachedPolicies(R2dbcPolicies database, OwnerScope scope, StoreChanges changes) {
        this.database = database;
        this.scope = scope;
        this.changes = changes;
    }

    @Override
    public Flux<Policy> policies() {
        return OwnerScope.visible(all(), Policy::subject);
    }

    private Flux<Policy> all() {
        List<Policy> cached = cached();
        if (cached != null) {
            return Flux.fromIterable(cached);
        }
        long changesBefore = changeCount();
        return database.policies().collectList()
                .doOnNext(read -> keep(changesBefore, read))
                .flatMapIterable(read -> read);
    }

    @Override
    public Mono<Policy> find(Owner owner, String subject, String id) {
        return policies().filter(policy -> policy.owner() == owner && policy.subject().equals(subject) && policy.id().equals(id)).next();
    }

    @Override
    public Mono<Policy> create(Policy policy) {
        return scope.write(policy.owner(), policy.subject(), new OwnerScope.Write("policy.create", "create a policy", policy.id()),
                caller -> Mono.error(new NotPermittedException(caller, "create another user's policy")),
                caller -> changed(database.create(policy), policy.id()));
    }

    @Override
    public Mono<Policy> update(Policy policy) {
        return scope.write(policy.owner(), policy.subject(), new OwnerScope.Write("policy.update", "change a policy", policy.id()),
                caller -> Mono.empty(),
                caller -> changed(database.update(policy), policy.id()));
    }

    @Override
    public Mono<Boolean> delete(Owner owner, String subject, String id) {
        return scope.write(owner, subject, new OwnerScope.Write("policy.delete", "remove a policy", id), caller -> Mono.just(false),
                caller -> changed(database.delete(owner, subject, id), id));
    }

    /** Drops what was read: the next asker reads the table again. */
    synchronized void forget() {
        changeCount++;
        policies = null;
    }

    /** Forgotten before the writer hears of it, so that the writer's next read sees its own write. */
    private <T> Mono<T> changed(Mono<T> write, String id) {
        return write.flatMap(written -> changes.record("policy", id).thenReturn(written))
                .doOnTerminate(this::forget)
                .doOnCancel(this::forget);
    }

    private synchronized @Nullable List<Policy> cached() {
        return policies;
    }

    private synchronized long changeCount() {
        return changeCount;
    }

    private synchronized void keep(long changesBefore, List<Policy> read) {
        if (changeCount == changesBefore) {
            policies = List.copyOf(read);
        }
    }
}
