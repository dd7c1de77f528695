package dev.tether.store.storage;

import java.util.function.Function;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/**
 * The one place where rows meet principals: every store that the rest of Tether reads and writes through
 * ({@link MemoryStore}, {@link CachedPolicies}, {@link R2dbcOAuthClients}, {@link R2dbcPluginSettings}) asks here, with
 * the principal of the pipeline that asks ({@link Principals}), whether a row is seen and whether it may be written. A
 * row the caller does not see does not exist for it (empty, not found); a row it sees but may not change is a
 * {@link NotPermittedException}. So a new route cannot forget isolation: it reads and writes through these stores,
 * which know who is asking without being told. Every write, and every refused one, goes to the audit trail.
 */
@Component
final class OwnerScope {

    /** What a caller may do with a row. */
    enum Access {
        /** Another user's: it does not exist for the caller. */
        HIDDEN,
        /** Seen, not to be changed (the organisation's for a member, anything for a viewer). */
        READ,
        WRITE
    }

    /** A write as the audit trail names it ({@code connection.create}) and as a refusal says it ({@code create a connection}). */
    record Write(String event, String action, String target) {
    }

    private final Audit audit;

    OwnerScope(Audit audit) {
        this.audit = audit;
    }

    static Mono<Principal> caller() {
        return Principals.current();
    }

    static Access access(Principal caller, String subject) {
        if (!caller.sees(subject)) {
            return Access.HIDDEN;
        }
        return caller.mayWrite(subject) ? Access.WRITE : Access.READ;
    }

    static boolean sees(Principal caller, ConnectionKey key) {
        return caller.sees(key.subject());
    }

    /** {@code then} when the caller sees the connection; empty when it is another user's. */
    static <T> Mono<T> seen(ConnectionKey key, Mono<T> then) {
        return caller().flatMap(caller -> sees(caller, key) ? then : Mono.empty());
    }

    /** The rows of {@code rows} the caller sees, by each row's subject. */
    static <T> Flux<T> visible(Flux<T> rows, Function<T, String> subject) {
        return caller().flatMapMany(caller -> rows.filter(row -> caller.sees(subject.apply(row))));
    }

    /**
     * Runs {@code write} when the caller may write a row of {@code owner} and {@code subject}: {@code hidden} when it does
     * not see the row (another user's), a {@link NotPermittedException} naming the action when it sees it only.
     */
    <T> Mono<T> write(Owner owner, String subject, Write what, Function<Principal, Mono<T>> hidden,
            Function<Principal, Mono<T>> write) {
        return caller().flatMap(caller -> switch (access(caller, subject)) {
            case HIDDEN -> hidden.apply(caller).doOnEach(signal -> {
                if (signal.isOnError() && signal.getThrowable() instanceof NotPermittedException) {
                    record(caller, what, "refused");
                }
            });
            case READ -> {
                record(caller, what, "refused");
                yield Mono.error(new NotPermittedException(caller, what.action() + (owner == Owner.ORG ? " of the organisation" : "")));
            }
            case WRITE -> recorded(caller, what, write.apply(caller));
        });
    }

    /** For what the organisation shares and only an admin changes (servers): an error unless the caller is one. */
    <T> Mono<T> administer(Write what, Mono<T> write) {
        return caller().flatMap(caller -> {
            if (caller.mayWrite("")) {
                return recorded(caller, what, write);
            }
            record(caller, what, "refused");
            return Mono.error(new NotPermittedException(caller, what.action()));
        });
    }

    /** A write's outcome in the trail: {@code ok}, {@code absent} (nothing there to change), or {@code failed}. */
    private <T> Mono<T> recorded(Principal caller, Write what, Mono<T> write) {
        return write.doOnSuccess(value -> record(caller, what, value == null || Boolean.FALSE.equals(value) ? "absent" : "ok"))
                .doOnError(failed -> record(caller, what, "failed"));
    }

    private void record(Principal caller, Write what, String outcome) {
        audit.record(AuditEvent.of(caller, what.event(), what.target(), outcome));
    }
}
