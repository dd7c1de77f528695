package dev.tether.execution;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.graalvm.polyglot.Value;
import org.jspecify.annotations.Nullable;

/**
 * The code's result taken out of the sandbox by Tether, never by the guest's own {@code JSON} functions: a structured
 * clone of the value (own enumerable properties, array elements, primitives; a {@code Date} as its ISO string), then
 * written as JSON by the host. Replacing {@code JSON.stringify}, a {@code toJSON}, a getter, a proxy or a
 * {@code Symbol.toPrimitive} can change what the result holds, never the answer around it. As JSON would, it leaves
 * out functions, symbols and {@code undefined} in objects and writes them as {@code null} in arrays; numbers read as
 * JavaScript writes them.
 *
 * <p>Bounded: a value that would write more than {@code limit} characters, nests deeper than {@link #MAX_DEPTH} or
 * refers to itself is refused with a {@link Refused} that says so, before it fills the heap.
 */
final class ResultClone {

    static final int MAX_DEPTH = 1000;
    /** Past 2^53 a long is not what JavaScript holds: such numbers are written as the doubles they are. */
    private static final long MAX_SAFE_INTEGER = (1L << 53) - 1;
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    /** Stands for a value that JSON leaves out of an object. */
    private static final Object ABSENT = new Object();

    /** The result cannot be written as JSON. */
    static final class Refused extends RuntimeException {

        Refused(String message) {
            super(message);
        }
    }

    /** A number as JavaScript writes it. */
    private record JsNumber(String text) {
    }

    /** The result as compact JSON, and as Executor's text: a string as it is, anything else as two-space JSON. */
    record Written(String json, @Nullable String text) {
    }

    private final long limit;
    private final List<Value> path = new ArrayList<>();
    private long size;

    private ResultClone(long limit) {
        this.limit = limit;
    }

    static Written write(Value value, long limit) {
        Object tree = new ResultClone(limit).clone(value, 0);
        if (tree == ABSENT) {
            tree = null;
        }
        StringBuilder json = new StringBuilder();
        compact(tree, json);
        String text = tree == null ? null : tree instanceof String string ? string : pretty(tree);
        return new Written(json.toString(), text);
    }

    private @Nullable Object clone(@Nullable Value value, int depth) {
        if (value == null || value.isNull()) {
            // GraalJS shows undefined as null too; only its text tells them apart, and no code can change that text.
            return value != null && "undefined".equals(value.toString()) ? ABSENT : count(null, 4);
        }
        if (value.isBoolean()) {
            return count(value.asBoolean(), 5);
        }
        if (value.isString()) {
            String string = value.asString();
            return count(string, string.length() + 2L);
        }
        if (value.isNumber()) {
            return count(number(value), 24);
        }
        if (value.isDate() && value.isTime() && value.isTimeZone()) {
            return count(ISO.format(value.asInstant()), 26);
        }
        if (value.canExecute() || !value.hasMembers() && !value.hasArrayElements()) {
            return ABSENT; // a function, a symbol, undefined
        }
        if (depth >= MAX_DEPTH) {
            throw new Refused("the result nests deeper than " + MAX_DEPTH + " levels");
        }
        for (Value seen : path) {
            if (seen.equals(value)) {
                throw new Refused("the result refers to itself (a circular structure) and cannot be written as JSON");
            }
        }
        path.add(value);
        try {
            if (value.hasArrayElements()) {
                long length = value.getArraySize();
                List<Object> items = new ArrayList<>();
                count(null, 2);
                for (long i = 0; i < length; i++) {
                    Object item = clone(value.getArrayElement(i), depth + 1);
                    items.add(item == ABSENT ? count(null, 5) : item);
                }
                return items;
            }
            Map<String, Object> members = new LinkedHashMap<>();
            count(null, 2);
            for (String key : value.getMemberKeys()) {
                Object member = clone(value.getMember(key), depth + 1);
                if (member != ABSENT) {
                    count(null, key.length() + 4L);
                    members.put(key, member);
                }
            }
            return members;
        }
        finally {
            path.remove(path.size() - 1);
        }
    }

    private @Nullable Object count(@Nullable Object written, long chars) {
        size += chars;
        if (size > limit) {
            throw new Refused("the result is larger than the output limit of " + limit + " bytes");
        }
        return written;
    }

    private static Object number(Value value) {
        if (value.fitsInLong() && value.asLong() >= -MAX_SAFE_INTEGER && value.asLong() <= MAX_SAFE_INTEGER) {
            return new JsNumber(Long.toString(value.asLong()));
        }
        if (value.fitsInDouble()) {
            return new JsNumber(text(value.asDouble()));
        }
        throw new Refused("the result holds a BigInt, which JSON cannot write");
    }

    /** ECMAScript's Number::toString: the shortest digits that read back as the same double. */
    static String text(double number) {
        if (Double.isNaN(number) || Double.isInfinite(number)) {
            return "null"; // as JSON writes them
        }
        if (number == 0) {
            return "0";
        }
        String sign = number < 0 ? "-" : "";
        BigDecimal exact = new BigDecimal(Math.abs(number));
        BigDecimal shortest = exact;
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal rounded = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (rounded.doubleValue() == Math.abs(number)) {
                shortest = rounded;
                break;
            }
        }
        shortest = shortest.stripTrailingZeros();
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int n = k - shortest.scale();
        String text;
        if (k <= n && n <= 21) {
            text = digits + "0".repeat(n - k);
        }
        else if (0 < n && n <= 21) {
            text = digits.substring(0, n) + "." + digits.substring(n);
        }
        else if (-6 < n && n <= 0) {
            text = "0." + "0".repeat(-n) + digits;
        }
        else {
            int exponent = n - 1;
            String mantissa = k == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
            text = mantissa + "e" + (exponent < 0 ? "-" : "+") + Math.abs(exponent);
        }
        return sign + text;
    }

    private static void compact(@Nullable Object tree, StringBuilder out) {
        if (tree instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                out.append(first ? "" : ",").append(JsJson.quote((String) entry.getKey())).append(':');
                compact(entry.getValue(), out);
                first = false;
            }
            out.append('}');
        }
        else if (tree instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "" : ",");
                compact(list.get(i), out);
            }
            out.append(']');
        }
        else {
            out.append(scalar(tree));
        }
    }

    /** As {@code JSON.stringify(value, null, 2)} writes it. */
    private static String pretty(Object tree) {
        StringBuilder out = new StringBuilder();
        pretty(tree, out, "");
        return out.toString();
    }

    private static void pretty(Object tree, StringBuilder out, String indent) {
        String inner = indent + "  ";
        if (tree instanceof Map<?, ?> map && !map.isEmpty()) {
            out.append("{\n");
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                out.append(first ? "" : ",\n").append(inner).append(JsJson.quote((String) entry.getKey())).append(": ");
                pretty(entry.getValue(), out, inner);
                first = false;
            }
            out.append('\n').append(indent).append('}');
        }
        else if (tree instanceof List<?> list && !list.isEmpty()) {
            out.append("[\n");
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "" : ",\n").append(inner);
                pretty(list.get(i), out, inner);
            }
            out.append('\n').append(indent).append(']');
        }
        else if (tree instanceof Map<?, ?>) {
            out.append("{}");
        }
        else if (tree instanceof List<?>) {
            out.append("[]");
        }
        else {
            out.append(scalar(tree));
        }
    }

    private static String scalar(@Nullable Object tree) {
        if (tree == null) {
            return "null";
        }
        if (tree instanceof String string) {
            return JsJson.quote(string);
        }
        if (tree instanceof JsNumber number) {
            return number.text();
        }
        return tree.toString();
    }
}
