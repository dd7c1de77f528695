package dev.tether.store;

/** An integration with this slug exists already. */
public final class IntegrationAlreadyExistsException extends RuntimeException {

    private final String slug;

    public IntegrationAlreadyExistsException(String slug) {
        super("integration '" + slug + "' already exists");
        this.slug = slug;
    }

    public String slug() {
        return slug;
    }
}
