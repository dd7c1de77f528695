package dev.tether.onepassword;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.store.Owner;
import dev.tether.store.PluginSettings;

/**
 * Executor's 1Password plugin on Tether: one binding ({@link OnePasswordConfig}) kept as Executor keeps it (the
 * plugin's {@code config} blob, JSON, under the {@code org} owner of a daemon without signed-in users), its status
 * and the vaults a binding sees, through the {@code op} CLI. Without a binding the answers are Executor's "not
 * configured" ones; nothing is made up.
 */
@Component
public final class OnePassword {

    static final String PLUGIN = "onepassword";
    static final String CONFIG = "config";

    private final PluginSettings settings;
    private final OnePasswordCli cli;
    private final JsonMapper json;

    OnePassword(PluginSettings settings, OnePasswordCli cli, JsonMapper json) {
        this.settings = settings;
        this.cli = cli;
        this.json = json;
    }

    /** The stored binding, token included; empty when there is none. */
    Mono<OnePasswordConfig> stored() {
        return settings.get(PLUGIN, CONFIG).map(text -> {
            try {
                return OnePasswordConfig.of(json.readValue(text, Map.class))
                        .orElseThrow(() -> new OnePasswordException("config decode", "Failed to decode 1Password config"));
            }
            catch (JacksonException ex) {
                throw new OnePasswordException("config decode", "Failed to decode 1Password config");
            }
        });
    }

    /** The binding as Executor shows it, without a token; empty when there is none. */
    public Mono<Optional<Map<String, Object>>> config() {
        return stored().map(config -> Optional.of(config.redacted())).defaultIfEmpty(Optional.empty());
    }

    /** Keeps this binding, replacing any other. */
    public Mono<Void> configure(OnePasswordConfig config) {
        return Mono.fromCallable(() -> json.writeValueAsString(config.stored()))
                .flatMap(text -> settings.put(PLUGIN, Owner.ORG, CONFIG, text));
    }

    /** Forgets the binding; none is no failure. */
    public Mono<Void> removeConfig() {
        return settings.delete(PLUGIN, Owner.ORG, CONFIG);
    }

    /** Whether the binding answers: not configured, or its vaults listed and the configured one named. */
    public Mono<ConnectionStatus> status() {
        return stored()
                .flatMap(config -> cli.vaults(config.auth()).map(vaults -> new ConnectionStatus(true, vaults.stream()
                        .filter(vault -> vault.id().equals(config.vaultId())).map(Vault::name).findFirst().orElse(null), null)))
                .defaultIfEmpty(ConnectionStatus.notConfigured());
    }

    /** The vaults this binding sees, by name. */
    public Mono<List<Vault>> vaults(OnePasswordAuth auth) {
        return cli.vaults(auth);
    }
}
