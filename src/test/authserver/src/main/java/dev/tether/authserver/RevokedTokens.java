package dev.tether.authserver;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.security.oauth2.core.OAuth2Error;
import org.springframework.security.oauth2.core.OAuth2TokenValidator;
import org.springframework.security.oauth2.core.OAuth2TokenValidatorResult;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Tokens revoked before their expiry, by id, as an administrator revokes a leaked one: the MCP server refuses them
 * from then on ({@code 401 invalid_token}), though their signature and lifetime are still good.
 */
@RestController
public class RevokedTokens implements OAuth2TokenValidator<Jwt> {

    private final Set<String> revoked = ConcurrentHashMap.newKeySet();

    @PostMapping("/revoked")
    Map<String, Object> revoke(@RequestParam String jti) {
        revoked.add(jti);
        return Map.of("revoked", jti);
    }

    @Override
    public OAuth2TokenValidatorResult validate(Jwt token) {
        return revoked.contains(token.getId())
                ? OAuth2TokenValidatorResult.failure(new OAuth2Error("invalid_token", "the token was revoked", null))
                : OAuth2TokenValidatorResult.success();
    }
}
