package dev.tether.store;

/** No integration has this slug. */
public final class IntegrationNotFoundException extends RuntimeException {

    private final String slug;

    public IntegrationNotFoundException(String slug) {
        super("integration '" + slug + "' not found");
        this.slug = slug;
    }

    public String slug() {
        return slug;
    }
}
