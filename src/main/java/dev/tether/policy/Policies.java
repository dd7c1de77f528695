package dev.tether.policy;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principals;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;
import dev.tether.store.PolicyStore;

/**
 * Tool policies as Executor keeps them, and the decision they make for a call: each owner contributes its
 * first matching policy (lowest position), and the most restrictive of those wins, so a user's policy cannot
 * weaken an org one. With no matching policy a tool the server marked destructive needs approval.
 */
@Component
public final class Policies {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final PolicyStore store;
    private final Clock clock;

    @Autowired
    public Policies(PolicyStore store) {
        this(store, Clock.systemUTC());
    }

    Policies(PolicyStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    public Flux<Policy> list() {
        return store.policies();
    }

    /**
     * Creates a policy in the organisation's list or the caller's own; without a position it goes on top of that list,
     * as Executor does.
     */
    public Mono<Policy> create(Owner owner, String pattern, PolicyAction action, Optional<String> position) {
        return Mono.fromRunnable(() -> requireValid(pattern))
                .then(Principals.current().map(owner::subjectFor))
                .flatMap(subject -> position.map(Mono::just).orElseGet(() -> store.policies()
                        .filter(p -> p.owner() == owner && p.subject().equals(subject))
                        .map(Policy::position)
                        .sort()
                        .next()
                        .map(PositionKeys::before)
                        .defaultIfEmpty(PositionKeys.FIRST))
                        .flatMap(key -> {
                            Instant now = now();
                            return store.create(new Policy(newId(), owner, subject, pattern, action, key, now, now));
                        }));
    }

    /** Changes what is given; fails with {@link PolicyNotFoundException} when the owner has no such policy. */
    public Mono<Policy> update(String id, Owner owner, Optional<String> pattern, Optional<PolicyAction> action,
            Optional<String> position) {
        return Mono.fromRunnable(() -> pattern.ifPresent(Policies::requireValid))
                .then(Principals.current().map(owner::subjectFor))
                .flatMap(subject -> store.find(owner, subject, id))
                .switchIfEmpty(Mono.error(() -> new PolicyNotFoundException(id)))
                .flatMap(old -> store.update(new Policy(id, owner, old.subject(), pattern.orElse(old.pattern()), action.orElse(old.action()),
                        position.orElse(old.position()), old.createdAt(), now())))
                .switchIfEmpty(Mono.error(() -> new PolicyNotFoundException(id)));
    }

    /** Executor answers {@code removed: true} whether or not the policy existed. */
    public Mono<Boolean> delete(String id, Owner owner) {
        return Principals.current().map(owner::subjectFor).flatMap(subject -> store.delete(owner, subject, id)).thenReturn(true);
    }

    /**
     * The decision for a call of the tool at {@code path} ({@code <integration>.<owner>.<connection>.<tool>}).
     *
     * @param destructive the server marked the tool destructive ({@code destructiveHint})
     */
    public Mono<Decision> decide(String path, boolean destructive) {
        return store.policies().collectList().map(all -> decide(path, destructive, all));
    }

    /** The decision over a snapshot of the policies ({@link #list()}), for deciding many tools at once. */
    public static Decision decide(String path, boolean destructive, List<Policy> policies) {
        Map<Owner, Policy> firstByOwner = new LinkedHashMap<>();
        policies.stream()
                .sorted(Comparator.comparing(Policy::position).thenComparing(Policy::id))
                .filter(policy -> PolicyPatterns.matches(policy.pattern(), path))
                .forEach(policy -> firstByOwner.putIfAbsent(policy.owner(), policy));
        Optional<Policy> strictest = firstByOwner.values().stream()
                .max(Comparator.comparing(Policy::action)); // enum order is restrictiveness
        if (strictest.isPresent()) {
            Policy policy = strictest.get();
            return new Decision(policy.action(), policy.pattern());
        }
        return new Decision(destructive ? PolicyAction.REQUIRE_APPROVAL : PolicyAction.APPROVE, null);
    }

    private static void requireValid(String pattern) {
        String problem = PolicyPatterns.problem(pattern);
        if (problem != null) {
            throw new InvalidPolicyException(problem);
        }
    }

    /** Executor's timestamps are whole seconds. */
    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS);
    }

    private static String newId() {
        StringBuilder id = new StringBuilder("pol_");
        for (int i = 0; i < 18; i++) {
            id.append(Character.forDigit(RANDOM.nextInt(36), 36));
        }
        return id.toString();
    }
}
