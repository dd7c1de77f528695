package dev.tether.openapi;

import java.util.Comparator;

/**
 * The order of JavaScript's {@code a.localeCompare(b)} (ICU's root collation), in which Executor lists a document's
 * paths: spaces, then punctuation, symbols and {@code $}, then digits, then letters without regard to case, and only
 * between strings equal so, lower case before upper. So {@code /pets/{id}} comes before {@code /pets/2fa}, which
 * comes before {@code /pets/apple} and {@code /Pets/zoo}, where code points would have put {@code /Pets/zoo} first.
 * Exact for ASCII, which paths are made of (anything else is percent-encoded); other characters follow the letters,
 * by code point.
 */
final class LocaleCompareOrder implements Comparator<String> {

    static final LocaleCompareOrder INSTANCE = new LocaleCompareOrder();

    /** ASCII punctuation and symbols in the root collation's order. */
    private static final String PUNCTUATION_AND_SYMBOLS = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

    private LocaleCompareOrder() {
    }

    @Override
    public int compare(String a, String b) {
        int primary = compareBy(a, b, LocaleCompareOrder::primary);
        if (primary != 0) {
            return primary;
        }
        int tertiary = compareBy(a, b, c -> Character.isUpperCase(c) ? 1 : 0);
        return tertiary != 0 ? tertiary : a.compareTo(b);
    }

    private static int compareBy(String a, String b, java.util.function.IntUnaryOperator weight) {
        int length = Math.min(a.length(), b.length());
        for (int i = 0; i < length; i++) {
            int difference = Integer.compare(weight.applyAsInt(a.charAt(i)), weight.applyAsInt(b.charAt(i)));
            if (difference != 0) {
                return difference;
            }
        }
        return Integer.compare(a.length(), b.length());
    }

    /** The weight that orders a character before any case is considered. */
    private static int primary(int c) {
        if (Character.isWhitespace(c)) {
            return c;
        }
        int punctuation = PUNCTUATION_AND_SYMBOLS.indexOf(c);
        if (punctuation >= 0) {
            return 0x100 + punctuation;
        }
        if (c >= '0' && c <= '9') {
            return 0x200 + c;
        }
        if (c < 0x80 && Character.isLetter(c)) {
            return 0x300 + Character.toLowerCase(c);
        }
        return 0x400 + c;
    }
}
