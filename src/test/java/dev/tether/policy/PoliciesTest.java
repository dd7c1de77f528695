package dev.tether.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tether.identity.Principal;
import dev.tether.store.Owner;
import dev.tether.store.Policy;
import dev.tether.store.PolicyAction;

/** Executor's policy grammar, position keys and resolution. */
class PoliciesTest {

    private static final String ECHO = "everything.org.default.echo";

    @Test
    void patternsMatchAsExecutorsGrammarSays() {
        assertThat(PolicyPatterns.matches("*", ECHO)).isTrue();
        assertThat(PolicyPatterns.matches(ECHO, ECHO)).isTrue();
        assertThat(PolicyPatterns.matches("everything.*", ECHO)).isTrue();
        assertThat(PolicyPatterns.matches("everything.org.default.echo.*", ECHO)).as("a subtree includes its root").isTrue();
        assertThat(PolicyPatterns.matches("everything.*.*.echo", ECHO)).isTrue();
        assertThat(PolicyPatterns.matches("everything.*.echo", ECHO)).as("a middle * is one segment").isFalse();
        assertThat(PolicyPatterns.matches("everything.org", ECHO)).isFalse();
        assertThat(PolicyPatterns.matches("tools.everything.*", ECHO)).isFalse();
    }

    @Test
    void invalidPatternsAreNamed() {
        assertThat(PolicyPatterns.problem("me*")).contains("whole segment");
        assertThat(PolicyPatterns.problem("*.echo")).contains("`*` alone");
        assertThat(PolicyPatterns.problem("a..b")).contains("empty segment");
        assertThat(PolicyPatterns.problem("")).contains("empty");
        assertThat(PolicyPatterns.problem("a.*.b.*")).isNull();
    }

    @Test
    void newPoliciesGoOnTopAsExecutorNumbersThem() {
        assertThat(PositionKeys.before(null)).isEqualTo("a0");
        assertThat(PositionKeys.before("a0")).isEqualTo("Zz");
        assertThat(PositionKeys.before("Zz")).isEqualTo("Zy");
        assertThat(PositionKeys.before("Z0")).isEqualTo("Yzz");
        assertThat(PositionKeys.before("a5")).isEqualTo("a4");
        assertThat(PositionKeys.before("a0V")).isEqualTo("a0");
        assertThat(PositionKeys.before("Yzz").compareTo("Yzz")).isNegative();
    }

    @Test
    void eachOwnersFirstMatchCountsAndTheStrictestWins() {
        List<Policy> policies = List.of(
                policy("p1", Owner.ORG, "everything.*", PolicyAction.REQUIRE_APPROVAL, "a0"),
                policy("p2", Owner.ORG, ECHO, PolicyAction.APPROVE, "Zz"),
                policy("p3", Owner.USER, "*", PolicyAction.BLOCK, "a0"));
        assertThat(Policies.decide(ECHO, false, policies)).isEqualTo(new Decision(PolicyAction.BLOCK, "*"));
        assertThat(Policies.decide(ECHO, false, policies.subList(0, 2)))
                .as("the org's first match by position").isEqualTo(new Decision(PolicyAction.APPROVE, ECHO));
        assertThat(Policies.decide("everything.org.default.sum", false, policies.subList(0, 2)))
                .isEqualTo(new Decision(PolicyAction.REQUIRE_APPROVAL, "everything.*"));
    }

    @Test
    void destructiveToolsNeedApprovalUnlessAPolicyApprovesThem() {
        assertThat(Policies.decide(ECHO, true, List.of())).isEqualTo(new Decision(PolicyAction.REQUIRE_APPROVAL, null));
        assertThat(Policies.decide(ECHO, false, List.of())).isEqualTo(new Decision(PolicyAction.APPROVE, null));
        assertThat(Policies.decide(ECHO, true, List.of(policy("p", Owner.USER, ECHO, PolicyAction.APPROVE, "a0"))))
                .isEqualTo(new Decision(PolicyAction.APPROVE, ECHO));
    }

    private static Policy policy(String id, Owner owner, String pattern, PolicyAction action, String position) {
        Instant at = Instant.ofEpochSecond(1_700_000_000L);
        return new Policy(id, owner, owner == Owner.USER ? Principal.LOCAL_SUBJECT : "", pattern, action, position, at, at);
    }
}
