package dev.tether.onepassword;

/** A 1Password vault as Executor lists it. */
public record Vault(String id, String name) {
}
