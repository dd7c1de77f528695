package dev.tether.api;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.tether.policy.Policies;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;

/** Executor's tool policies: approve, require approval for, or block the calls whose path a pattern matches. */
@RestController
final class PoliciesController {

    public record CreateRequest(String owner, String pattern, String action, String position) {
    }

    public record UpdateRequest(String owner, String pattern, String action, String position) {
    }

    public record OwnerRequest(String owner) {
    }

    /** Executor's policy row; instants as epoch milliseconds. */
    record PolicyView(String id, String owner, String pattern, String action, String position, long createdAt, long updatedAt) {

        static PolicyView of(Policy policy) {
            return new PolicyView(policy.id(), policy.owner().wire(), policy.pattern(), policy.action().wire(), policy.position(),
                    policy.createdAt().toEpochMilli(), policy.updatedAt().toEpochMilli());
        }
    }

    private final Policies policies;

    PoliciesController(Policies policies) {
        this.policies = policies;
    }

    @GetMapping("/api/policies")
    Mono<List<PolicyView>> list() {
        return policies.list().map(PolicyView::of).collectList();
    }

    @PostMapping("/api/policies")
    Mono<PolicyView> create(@RequestBody CreateRequest request) {
        return Mono.defer(() -> policies.create(Inputs.owner(request.owner(), "owner"), Inputs.requireText(request.pattern(), "pattern"),
                        action(request.action()), position(request.position())))
                .map(PolicyView::of);
    }

    @PatchMapping("/api/policies/{policyId}")
    Mono<PolicyView> update(@PathVariable String policyId, @RequestBody UpdateRequest request) {
        return Mono.defer(() -> policies.update(policyId, Inputs.owner(request.owner(), "owner"),
                        Optional.ofNullable(request.pattern()).map(pattern -> Inputs.requireText(pattern, "pattern")),
                        Optional.ofNullable(request.action()).map(PoliciesController::action), position(request.position())))
                .map(PolicyView::of);
    }

    @DeleteMapping("/api/policies/{policyId}")
    Mono<Map<String, Boolean>> delete(@PathVariable String policyId, @RequestBody OwnerRequest request) {
        return Mono.defer(() -> policies.delete(policyId, Inputs.owner(request.owner(), "owner")))
                .map(removed -> Map.of("removed", removed));
    }

    private static PolicyAction action(String value) {
        return PolicyAction.parse(value).orElseThrow(() -> InvalidInputException.decode(
                "`action` must be \"approve\", \"require_approval\" or \"block\", was " + (value == null ? "missing" : "\"" + value + "\"")));
    }

    private static Optional<String> position(String value) {
        if (value != null && !value.matches("[A-Za-z][0-9A-Za-z]*")) {
            throw InvalidInputException.decode("`position` must be a fractional-index key such as \"a0\", was \"" + value + "\"");
        }
        return Optional.ofNullable(value);
    }
}
