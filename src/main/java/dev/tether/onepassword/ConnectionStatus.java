package dev.tether.onepassword;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * Whether the configured 1Password binding answers, as Executor reports it.
 *
 * @param connected whether the vaults could be listed with the stored binding
 * @param vaultName the configured vault's name, when it was among them
 * @param error     why not, when not
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConnectionStatus(boolean connected, @Nullable String vaultName, @Nullable String error) {

    static ConnectionStatus notConfigured() {
        return new ConnectionStatus(false, null, "Not configured");
    }
}
