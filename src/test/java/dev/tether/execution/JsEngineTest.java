package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;

import org.graalvm.polyglot.Context;
import org.junit.jupiter.api.Test;

/** The engine costs nothing until the first execution, and then it is built once. */
class JsEngineTest {

    @Test
    void engineIsBuiltOnTheFirstContextOnly() {
        JsEngine engine = new JsEngine(ExecutionProperties.defaults());
        try {
            assertThat(engine.built()).isFalse();
            try (Context first = engine.newContext(); Context second = engine.newContext()) {
                assertThat(engine.built()).isTrue();
                assertThat(first.getEngine()).isSameAs(second.getEngine());
                assertThat(first.eval("js", "typeof Java + ' ' + typeof print + ' ' + typeof load").asString())
                        .as("print and load are off; the prelude removes Java").isEqualTo("object undefined undefined");
            }
        }
        finally {
            engine.destroy();
        }
    }
}
