package dev.tether.process;

/** A child wrote more to stdout than Tether buffers for it; the child is torn down. */
public final class ChildOutputOverflowException extends RuntimeException {

    ChildOutputOverflowException(ChildProcess child, String what) {
        super(child + " flooded its stdout with " + what + " (tether.process.stdout-buffer-lines / stdout-buffer); "
                + "it was torn down");
    }
}
