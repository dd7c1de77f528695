package dev.tether.identity;

/**
 * Where audit events go: the audit trail (its table and its log lines). Recording never blocks and never fails the
 * work it records.
 */
@FunctionalInterface
public interface Audit {

    /** Records nothing: for parts built without a trail (tests of one part). */
    Audit NONE = event -> {
    };

    void record(AuditEvent event);
}
