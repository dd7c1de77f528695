package dev.tether.policy;

import org.jspecify.annotations.Nullable;

/**
 * The fractional-index keys Executor gives policies (the {@code fractional-indexing} scheme, base 62): a new
 * policy without a position goes above its owner's first one, so {@code a0}, then {@code Zz}, {@code Zy}, …
 */
final class PositionKeys {

    private static final String DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static final String FIRST = "a0";

    private PositionKeys() {
    }

    /** A key that sorts before {@code first}, or {@link #FIRST} when the list is empty. */
    static String before(String first) {
        if (first == null) {
            return FIRST;
        }
        int length = integerLength(first.charAt(0));
        if (length < 0 || length > first.length()) {
            throw new IllegalArgumentException("not a position key: " + first);
        }
        String integer = first.substring(0, length);
        if (length < first.length()) {
            return integer; // the integer part alone sorts before integer + fraction
        }
        String decremented = decrement(integer);
        if (decremented == null) {
            throw new IllegalStateException("no position key sorts before " + first);
        }
        return decremented;
    }

    private static int integerLength(char head) {
        if (head >= 'a' && head <= 'z') {
            return head - 'a' + 2;
        }
        if (head >= 'A' && head <= 'Z') {
            return 'Z' - head + 2;
        }
        return -1;
    }

    private static @Nullable String decrement(String integer) {
        char head = integer.charAt(0);
        StringBuilder digits = new StringBuilder(integer.substring(1));
        boolean borrow = true;
        for (int i = digits.length() - 1; borrow && i >= 0; i--) {
            int digit = DIGITS.indexOf(digits.charAt(i)) - 1;
            if (digit == -1) {
                digits.setCharAt(i, 'z');
            }
            else {
                digits.setCharAt(i, DIGITS.charAt(digit));
                borrow = false;
            }
        }
        if (!borrow) {
            return head + digits.toString();
        }
        if (head == 'a') {
            return "Zz";
        }
        if (head == 'A') {
            return null;
        }
        char lower = (char) (head - 1);
        if (lower < 'Z') {
            digits.append('z');
        }
        else {
            digits.setLength(digits.length() - 1);
        }
        return lower + digits.toString();
    }
}
