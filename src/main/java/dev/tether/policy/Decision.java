package dev.tether.policy;

import org.jspecify.annotations.Nullable;

import dev.tether.store.PolicyAction;

/**
 * What to do with one tool call.
 *
 * @param action  the effective action
 * @param pattern the pattern of the policy that decided, or null when the tool's own annotations did
 */
public record Decision(PolicyAction action, @Nullable String pattern) {

    public boolean blocked() {
        return action == PolicyAction.BLOCK;
    }

    public boolean needsApproval() {
        return action == PolicyAction.REQUIRE_APPROVAL;
    }
}
