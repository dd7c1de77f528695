package dev.tether.process;

/** A write to a child's stdin failed because the child closed it or exited. */
public final class ChildStdinClosedException extends RuntimeException {

    ChildStdinClosedException(ChildProcess child, Throwable cause) {
        super(child + " no longer reads its stdin: " + cause.getMessage(), cause);
    }
}
