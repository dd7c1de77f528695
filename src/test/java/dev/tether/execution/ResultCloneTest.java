package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.graalvm.polyglot.Context;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The result as Tether writes it from the guest's value: the same bytes as {@code JSON.stringify} for plain data. */
class ResultCloneTest {

    private static JsEngine engine;
    private static Context context;

    @BeforeAll
    static void open() {
        engine = new JsEngine(ExecutionProperties.defaults());
        context = engine.newContext();
    }

    @AfterAll
    static void close() {
        context.close();
        engine.destroy();
    }

    @Test
    void writesWhatJsonStringifyWritesForPlainData() {
        for (String value : new String[] { "[0.1, 1e21, 1.5e-7, -0, 2 ** 53, 123456789012, NaN, 1 / 3, -1e-7, 5e-324, 1e-6, 123.456, -5]",
                "{a: 'x\\u2028\"\\\\', b: [true, false, null], c: {d: {}}, e: [], 'k y': 1.5}", "'plain'", "[undefined, () => 1, Symbol('s')]",
                "{u: undefined, f() {}, n: 2 ** 31, m: -(2 ** 63), big: 1.7976931348623157e308, small: 2.2250738585072014e-308}",
                "new Date(Date.UTC(2024, 1, 29, 13, 14, 15, 16))" }) {
            String expected = context.eval("js", "JSON.stringify(" + value + ")").asString();
            assertThat(ResultClone.write(context.eval("js", "(" + value + ")"), 1 << 20).json()).as(value).isEqualTo(expected);
        }
        assertThat(ResultClone.write(context.eval("js", "({a: [1, {b: 2}], c: {}})"), 1 << 20).text())
                .isEqualTo(context.eval("js", "JSON.stringify({a: [1, {b: 2}], c: {}}, null, 2)").asString());
        assertThat(ResultClone.write(context.eval("js", "'text'"), 1 << 20).text()).isEqualTo("text");
        assertThat(ResultClone.write(context.eval("js", "undefined"), 1 << 20).json()).isEqualTo("null");
    }

    @Test
    void refusesWhatCannotBeWrittenOrWouldBeTooLarge() {
        assertThatThrownBy(() -> ResultClone.write(context.eval("js", "(() => { const a = [1]; a.push(a); return a })()"), 1 << 20))
                .hasMessageContaining("circular");
        assertThatThrownBy(() -> ResultClone.write(context.eval("js", "'x'.repeat(2000)"), 1000))
                .hasMessageContaining("larger than the output limit of 1000 bytes");
        assertThatThrownBy(() -> ResultClone.write(context.eval("js",
                "(() => { let v = 1; for (let i = 0; i < 1100; i++) v = [v]; return v })()"), 1 << 20)).hasMessageContaining("nests deeper");
    }
}
