package dev.tether.execution;

/** JSON text written exactly as JavaScript's {@code JSON.stringify} writes it, so answers read as Executor's do. */
public final class JsJson {

    private JsJson() {
    }

    public static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    boolean loneSurrogate = Character.isSurrogate(c) && !(Character.isHighSurrogate(c) && i + 1 < text.length()
                            && Character.isLowSurrogate(text.charAt(i + 1)));
                    if (Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(text.charAt(i - 1))) {
                        loneSurrogate = false;
                    }
                    if (c < 0x20 || loneSurrogate) {
                        out.append(String.format("\\u%04x", (int) c));
                    }
                    else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    static String array(Iterable<String> texts) {
        StringBuilder out = new StringBuilder("[");
        for (String text : texts) {
            out.append(out.length() == 1 ? "" : ",").append(quote(text));
        }
        return out.append(']').toString();
    }

    /**
     * {@code value} (maps, lists, strings, numbers, booleans, null, as JSON parsers make them) as
     * {@code JSON.stringify(value, null, indent)} writes it; {@code indent} empty writes it compact.
     */
    public static String write(Object value, String indent, String margin) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String text) {
            return quote(text);
        }
        if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            return number == Math.rint(number) && !Double.isInfinite(number) && Math.abs(number) < 1e21
                    ? Long.toString((long) number) : Double.toString(number).replace("E", "e+").replace("e+-", "e-");
        }
        if (value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        String inner = margin + indent;
        String separator = indent.isEmpty() ? "," : ",\n" + inner;
        String open = indent.isEmpty() ? "" : "\n" + inner;
        String close = indent.isEmpty() ? "" : "\n" + margin;
        StringBuilder out = new StringBuilder();
        if (value instanceof java.util.Map<?, ?> map) {
            if (map.isEmpty()) {
                return "{}";
            }
            out.append('{').append(open);
            boolean first = true;
            for (var entry : map.entrySet()) {
                out.append(first ? "" : separator).append(quote(String.valueOf(entry.getKey())))
                        .append(indent.isEmpty() ? ":" : ": ").append(write(entry.getValue(), indent, inner));
                first = false;
            }
            return out.append(close).append('}').toString();
        }
        if (value instanceof Iterable<?> list) {
            if (!list.iterator().hasNext()) {
                return "[]";
            }
            out.append('[').append(open);
            boolean first = true;
            for (Object item : list) {
                out.append(first ? "" : separator).append(write(item, indent, inner));
                first = false;
            }
            return out.append(close).append(']').toString();
        }
        return quote(value.toString());
    }
}
