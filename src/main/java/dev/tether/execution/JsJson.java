package dev.tether.execution;

/** JSON text written exactly as JavaScript's {@code JSON.stringify} writes it, so answers read as Executor's do. */
final class JsJson {

    private JsJson() {
    }

    static String quote(String text) {
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
}
