package dev.tether.users;

import java.time.DateTimeException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principals;
import dev.tether.identity.Role;

/**
 * Tether's own: personal API tokens. A user lists, issues and revokes its own; an admin issues them for other users
 * (naming their {@code subject}), lists everyone's ({@code ?all=true}) and revokes any. The token's text is in the answer
 * of its issue, once, and never again.
 */
@RestController
@RequestMapping("/api/tokens")
final class TokensController {

    /** Body of {@code POST /api/tokens}. */
    public record IssueRequest(String name, @Nullable String subject, @Nullable String role, @Nullable String expiresAt,
            @Nullable Integer expiresInDays) {
    }

    /** A token as the API shows it: never its secret. */
    public record TokenView(String id, String name, String subject, String role, String createdBy, String createdAt, String expiresAt,
            @Nullable String revokedAt, @Nullable String lastUsedAt) {

        static TokenView of(ApiToken token) {
            return new TokenView(token.id(), token.name(), token.subject(), token.role().wire(), token.createdBy(),
                    token.createdAt().toString(), token.expiresAt().toString(), token.revokedAt().map(Instant::toString).orElse(null),
                    token.lastUsedAt().map(Instant::toString).orElse(null));
        }
    }

    /** The answer of an issue: the token's text, once, beside what is kept of it. */
    public record IssuedView(String token, TokenView tokenInfo) {
    }

    private final ApiTokens tokens;

    TokensController(ApiTokens tokens) {
        this.tokens = tokens;
    }

    @GetMapping
    Flux<TokenView> list(@RequestParam(required = false) String all) {
        boolean everyone = all != null && (all.isEmpty() || all.equalsIgnoreCase("true") || all.equals("1"));
        return Principals.current().flatMapMany(caller -> tokens.list(caller, everyone)).map(TokenView::of);
    }

    @PostMapping
    Mono<IssuedView> issue(@RequestBody IssueRequest request) {
        return Mono.fromCallable(() -> new ApiTokens.NewToken(name(request),
                        Optional.ofNullable(request.subject()), role(request.role()), expiry(request)))
                .flatMap(asked -> Principals.current().flatMap(caller -> tokens.issue(caller, asked)))
                .map(issued -> new IssuedView(issued.secret(), TokenView.of(issued.token())));
    }

    @DeleteMapping("/{id}")
    Mono<Map<String, Object>> revoke(@PathVariable String id) {
        InvalidRequestException.bounded("id", id, 64);
        return Principals.current().flatMap(caller -> tokens.revoke(caller, id))
                .map(revoked -> Map.of("revoked", true, "token", TokenView.of(revoked)));
    }

    private static String name(IssueRequest request) {
        if (request.name() == null || request.name().isBlank()) {
            throw new InvalidRequestException("`name` is required and must be a non-empty string");
        }
        InvalidRequestException.bounded("name", request.name(), 200);
        InvalidRequestException.bounded("subject", request.subject(), 255);
        InvalidRequestException.bounded("expiresAt", request.expiresAt(), 64);
        return request.name().strip();
    }

    private static Optional<Role> role(@Nullable String role) {
        if (role == null || role.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(Role.parse(role).orElseThrow(() -> new InvalidRequestException(
                "`role` must be \"admin\", \"member\" or \"viewer\", was \"" + role + "\"")));
    }

    private static Optional<Instant> expiry(IssueRequest request) {
        if (request.expiresAt() != null && request.expiresInDays() != null) {
            throw new InvalidRequestException("give at most one of `expiresAt` and `expiresInDays`");
        }
        if (request.expiresInDays() != null) {
            if (request.expiresInDays() < 1) {
                throw new InvalidRequestException("`expiresInDays` must be at least 1, was " + request.expiresInDays());
            }
            return Optional.of(Instant.now().plusSeconds(86_400L * request.expiresInDays()));
        }
        if (request.expiresAt() == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.parse(request.expiresAt()));
        }
        catch (DateTimeException notAnInstant) {
            throw new InvalidRequestException("`expiresAt` must be an ISO-8601 instant (2027-01-31T00:00:00Z), was \""
                    + request.expiresAt() + "\"");
        }
    }
}
