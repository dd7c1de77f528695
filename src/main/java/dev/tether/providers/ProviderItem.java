package dev.tether.providers;

/**
 * An entry of a credential provider as Executor lists it for a UI to pick: an opaque id and a label.
 *
 * @param id   what a connection would reference
 * @param name what a person reads
 */
public record ProviderItem(String id, String name) {
}
