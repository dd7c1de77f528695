package dev.tether.users;

import java.time.Instant;

import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principals;
import dev.tether.identity.Role;
import dev.tether.store.SignedInUsers;

/** Tether's own, for admins: the users who signed in through the provider, their role and standing. */
@RestController
final class UsersController {

    /** A user as an admin sees it: never its refresh token. */
    public record UserView(String subject, @Nullable String name, @Nullable String email, String role, String signedInAt,
            String checkedAt, @Nullable String disabledAt, @Nullable String disabledReason) {

        static UserView of(SignedInUsers.User user) {
            return new UserView(user.subject(), user.name().orElse(null), user.email().orElse(null), user.role().wire(),
                    user.signedInAt().toString(), user.checkedAt().toString(), user.disabledAt().map(Instant::toString).orElse(null),
                    user.disabledReason().orElse(null));
        }
    }

    private final SignedInUsers users;

    UsersController(SignedInUsers users) {
        this.users = users;
    }

    @GetMapping("/api/users")
    Flux<UserView> list() {
        return Principals.current().flatMapMany(caller -> caller.role() == Role.ADMIN ? users.all().map(UserView::of)
                : Flux.error(new NotPermittedException(caller, "list the users")));
    }
}
