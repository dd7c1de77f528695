package dev.tether.process;

import java.nio.charset.StandardCharsets;

/**
 * The most recent bytes a child wrote to stderr. The child's stderr is drained continuously (a full
 * pipe would block the child); only the tail is kept, for error messages and logs.
 */
final class StderrTail {

    private final byte[] ring;
    private long written;

    StderrTail(int capacity) {
        this.ring = new byte[capacity];
    }

    synchronized void append(byte[] bytes, int length) {
        for (int i = 0; i < length; i++) {
            ring[(int) (written++ % ring.length)] = bytes[i];
        }
    }

    synchronized String text() {
        int size = (int) Math.min(written, ring.length);
        byte[] out = new byte[size];
        long start = written - size;
        for (int i = 0; i < size; i++) {
            out[i] = ring[(int) ((start + i) % ring.length)];
        }
        String text = new String(out, StandardCharsets.UTF_8).strip();
        return written > ring.length ? "…" + text : text;
    }
}
