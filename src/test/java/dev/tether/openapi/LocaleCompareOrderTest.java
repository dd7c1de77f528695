package dev.tether.openapi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Paths in the order Executor 1.5.9's preview listed them (Node's {@code localeCompare}), recorded from the real one. */
class LocaleCompareOrderTest {

    private static final List<String> AS_EXECUTOR_LISTS_THEM = List.of("/pets", "/pets_archive", "/pets-archive", "/pets/{petId}",
            "/pets/{petId}/photos", "/pets/2fa", "/pets/apple", "/pets/findByStatus", "/Pets/Zoo");

    @Test
    void sortsPathsAsJavaScriptsLocaleCompare() {
        for (long seed = 0; seed < 20; seed++) {
            List<String> shuffled = new ArrayList<>(AS_EXECUTOR_LISTS_THEM);
            Collections.shuffle(shuffled, new java.util.Random(seed));
            shuffled.sort(LocaleCompareOrder.INSTANCE);
            assertThat(shuffled).containsExactlyElementsOf(AS_EXECUTOR_LISTS_THEM);
        }
    }

    @Test
    void caseOnlyDecidesBetweenStringsOtherwiseEqualAndLowerComesFirst() {
        assertThat(LocaleCompareOrder.INSTANCE.compare("/pets", "/Pets")).isNegative();
        assertThat(LocaleCompareOrder.INSTANCE.compare("/Pets/a", "/pets/b")).isNegative();
        assertThat(LocaleCompareOrder.INSTANCE.compare("/pets", "/pets")).isZero();
    }
}
