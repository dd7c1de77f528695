package dev.tether.identity;

/**
 * A principal asked for something its role does not allow (a viewer changing a row, a member changing what the
 * organisation shares). The message names the role and the action, never a secret; the API answers 403.
 */
public final class NotPermittedException extends RuntimeException {

    private final Role role;

    public NotPermittedException(Principal principal, String action) {
        super((principal.role() == Role.ADMIN ? "an " : "a ") + principal.role().wire() + " may not " + action);
        this.role = principal.role();
    }

    public Role role() {
        return role;
    }
}
