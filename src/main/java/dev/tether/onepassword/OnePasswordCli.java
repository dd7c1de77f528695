package dev.tether.onepassword;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.process.ChildProcesses;
import dev.tether.process.ChildSpec;

/**
 * 1Password's {@code op} CLI, run as a child of Tether's own (so it is owned, bounded and torn down like any other):
 * {@code op vault list --format=json}, signed in as the binding says: {@code --account} for the desktop app, the
 * service account's token in {@code OP_SERVICE_ACCOUNT_TOKEN} (never on the command line). Any failure (no such
 * command, not signed in, a timeout, output that is not the list) is Executor's {@code OnePasswordError} for the
 * operation, in Executor's words.
 */
@Component
final class OnePasswordCli {

    private static final Logger log = LoggerFactory.getLogger(OnePasswordCli.class);

    static final String VAULT_LISTING = "vault listing";

    private final ChildProcesses children;
    private final OnePasswordProperties properties;
    private final JsonMapper json;
    private final AtomicLong runs = new AtomicLong();

    OnePasswordCli(ChildProcesses children, OnePasswordProperties properties, JsonMapper json) {
        this.children = children;
        this.properties = properties;
        this.json = json;
    }

    /** The vaults this binding can see, by name. */
    Mono<List<Vault>> vaults(OnePasswordAuth auth) {
        List<String> argv = new ArrayList<>(List.of(properties.cli(), "vault", "list", "--format=json"));
        Map<String, String> env = Map.of();
        if (auth.kind().equals(OnePasswordAuth.DESKTOP_APP)) {
            argv.add("--account");
            argv.add(auth.accountName());
        }
        else {
            env = Map.of("OP_SERVICE_ACCOUNT_TOKEN", auth.token());
        }
        ChildSpec spec = ChildSpec.of("onepassword-" + runs.incrementAndGet(), argv).withEnv(env);
        return children.using(spec, child -> child.stdout().collectList()
                        .zipWith(child.onExit())
                        .map(output -> {
                            if (output.getT2() != 0) {
                                log.info("1Password CLI {} exited {}: {}", VAULT_LISTING, output.getT2(), child.stderrTail().strip());
                                throw failed(VAULT_LISTING);
                            }
                            return vaults(String.join("\n", output.getT1()));
                        }))
                .next()
                .timeout(properties.timeout())
                .onErrorMap(error -> !(error instanceof OnePasswordException), error -> {
                    // Executor answers its own words; why it failed is for the operator (no token: env values never print).
                    log.warn("1Password CLI {} failed: {}", VAULT_LISTING, error.toString());
                    return failed(VAULT_LISTING);
                });
    }

    private List<Vault> vaults(String output) {
        try {
            JsonNode listed = json.readTree(output);
            if (!listed.isArray()) {
                throw failed(VAULT_LISTING);
            }
            return listed.valueStream()
                    .map(vault -> new Vault(vault.path("id").asString(), vault.path("name").asString()))
                    .sorted(Comparator.comparing(Vault::name))
                    .toList();
        }
        catch (JacksonException ex) {
            throw failed(VAULT_LISTING);
        }
    }

    private static OnePasswordException failed(String operation) {
        return new OnePasswordException(operation, "1Password CLI " + operation + " failed");
    }
}
