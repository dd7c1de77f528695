package dev.tether.server;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Optional;

/**
 * An address or a CIDR range of them ({@code 10.0.0.0/8}, {@code 192.0.2.7}, {@code fd00::/8}, {@code ::1}), written
 * as IP literals only: nothing here ever asks DNS.
 *
 * @param network the range's first address, as bytes (4 or 16)
 * @param prefix  how many leading bits an address must share with it
 */
record AddressRange(byte[] network, int prefix) {

    /** {@code entry} as a range; a malformed one stops the start with a message naming {@code property}. */
    static AddressRange parse(String property, String entry) {
        String text = entry == null ? "" : entry.strip();
        int slash = text.indexOf('/');
        Optional<InetAddress> address = literal(slash < 0 ? text : text.substring(0, slash));
        if (address.isEmpty()) {
            throw new IllegalArgumentException(property + " takes IP addresses and CIDR ranges (10.0.0.0/8), was '" + entry + "'");
        }
        byte[] bytes = address.get().getAddress();
        int bits = bytes.length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String length = text.substring(slash + 1);
            prefix = length.matches("\\d{1,3}") ? Integer.parseInt(length) : -1;
            if (prefix < 0 || prefix > bits) {
                throw new IllegalArgumentException(property + ": the prefix of '" + entry + "' must be 0 to " + bits);
            }
        }
        return new AddressRange(bytes, prefix);
    }

    /**
     * {@code text} as an address when it is an IPv4 or IPv6 literal (brackets allowed around IPv6); empty for anything
     * else, a host name included, which is never looked up.
     */
    static Optional<InetAddress> literal(String text) {
        String bare = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        boolean v4 = bare.matches("\\d{1,3}(\\.\\d{1,3}){3}")
                && Arrays.stream(bare.split("\\.")).allMatch(octet -> Integer.parseInt(octet) <= 255);
        boolean v6 = bare.contains(":") && bare.matches("[0-9A-Fa-f:.]+");
        if (!v4 && !v6) {
            return Optional.empty();
        }
        try {
            // A valid IPv4 literal is parsed, and one in brackets must be an IPv6 literal: neither is ever resolved.
            return Optional.of(InetAddress.getByName(v4 ? bare : "[" + bare + "]"));
        }
        catch (UnknownHostException malformed) {
            return Optional.empty();
        }
    }

    boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length != network.length) {
            return false;
        }
        int whole = prefix / 8;
        for (int i = 0; i < whole; i++) {
            if (bytes[i] != network[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        if (rest == 0) {
            return true;
        }
        int mask = 0xff << (8 - rest) & 0xff;
        return (bytes[whole] & mask) == (network[whole] & mask);
    }
}
