package dev.tether.api;

import java.util.List;
import java.util.Map;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.NullNode;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.InvalidInputException;
import dev.tether.onepassword.ConnectionStatus;
import dev.tether.onepassword.OnePassword;
import dev.tether.onepassword.OnePasswordAuth;
import dev.tether.onepassword.OnePasswordConfig;
import dev.tether.onepassword.Vault;

/** Executor's five 1Password routes: the binding (read without its token, kept, forgotten), its status, vaults. */
@RestController
final class OnePasswordController {

    /** Body of {@code PUT /api/onepassword/config}: Executor's {@code OnePasswordConfig}. */
    public record ConfigureRequest(AuthRequest auth, String vaultId, String name) {
    }

    public record AuthRequest(String kind, String accountName, String token) {
    }

    private final OnePassword onePassword;

    OnePasswordController(OnePassword onePassword) {
        this.onePassword = onePassword;
    }

    /** The binding without its token, or {@code null} as Executor answers when there is none. */
    @GetMapping(value = "/api/onepassword/config", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<Object> config() {
        return onePassword.config().map(config -> config.<Object>map(c -> c).orElse(NullNode.getInstance()));
    }

    @PutMapping("/api/onepassword/config")
    Mono<Void> configure(@RequestBody ConfigureRequest request) {
        Bounds.check(request);
        return Mono.fromCallable(() -> config(request)).flatMap(onePassword::configure);
    }

    private static OnePasswordConfig config(ConfigureRequest request) {
        AuthRequest auth = request.auth();
        if (auth == null) {
            throw InvalidInputException.decode("`auth` is required: { kind: \"desktop-app\", accountName } or { kind: \"service-account\", token }");
        }
        OnePasswordAuth checked;
        if (OnePasswordAuth.DESKTOP_APP.equals(auth.kind()) && auth.accountName() != null) {
            checked = new OnePasswordAuth(OnePasswordAuth.DESKTOP_APP, auth.accountName(), null);
        }
        else if (OnePasswordAuth.SERVICE_ACCOUNT.equals(auth.kind()) && auth.token() != null) {
            checked = new OnePasswordAuth(OnePasswordAuth.SERVICE_ACCOUNT, null, auth.token());
        }
        else {
            throw InvalidInputException.decode("`auth` must be { kind: \"desktop-app\", accountName: string } or"
                    + " { kind: \"service-account\", token: string }");
        }
        if (request.vaultId() == null) {
            throw InvalidInputException.decode("`vaultId` is required");
        }
        if (request.name() == null) {
            throw InvalidInputException.decode("`name` is required");
        }
        return new OnePasswordConfig(checked, request.vaultId(), request.name());
    }

    @DeleteMapping("/api/onepassword/config")
    Mono<Void> removeConfig() {
        return onePassword.removeConfig();
    }

    @GetMapping("/api/onepassword/status")
    Mono<ConnectionStatus> status() {
        return onePassword.status();
    }

    /** The vaults a binding would see: {@code account} is the desktop app's account or a service account's token. */
    @GetMapping("/api/onepassword/vaults")
    Mono<Map<String, List<Vault>>> vaults(@RequestParam(required = false) String authKind, @RequestParam(required = false) String account) {
        Bounds.check("authKind", authKind);
        Bounds.check("account", account);
        return Mono.fromCallable(() -> {
                    if (account == null) {
                        throw InvalidInputException.decode("`account` is required");
                    }
                    if (OnePasswordAuth.DESKTOP_APP.equals(authKind)) {
                        return new OnePasswordAuth(OnePasswordAuth.DESKTOP_APP, account, null);
                    }
                    if (OnePasswordAuth.SERVICE_ACCOUNT.equals(authKind)) {
                        return new OnePasswordAuth(OnePasswordAuth.SERVICE_ACCOUNT, null, account);
                    }
                    throw InvalidInputException.decode("`authKind` must be \"desktop-app\" or \"service-account\", was "
                            + (authKind == null ? "missing" : "\"" + authKind + "\""));
                })
                .flatMap(onePassword::vaults)
                .map(vaults -> Map.of("vaults", vaults));
    }
}
