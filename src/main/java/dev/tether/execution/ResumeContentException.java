package dev.tether.execution;

/** A resume's content does not match the schema of the form a server asked for; the execution stays paused. */
public final class ResumeContentException extends RuntimeException {

    public ResumeContentException(String message) {
        super(message);
    }
}
