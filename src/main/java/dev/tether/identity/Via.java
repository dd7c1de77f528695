package dev.tether.identity;

import java.util.Locale;

/** How a principal proved who it is; the audit trail records it beside the subject. */
public enum Via {
    /** The daemon's own bearer token ({@code auth.json}), or the desktop app's password. */
    DAEMON_TOKEN,
    /** Nothing asked: the desktop app with "require auth" off, on loopback only. */
    OPEN,
    /** A personal API token Tether issued ({@code tth_…}). */
    API_TOKEN,
    /** A JWT of the configured OIDC provider, audience-checked. */
    JWT,
    /** A web UI session after signing in through the OIDC provider. */
    SESSION,
    /** Work the daemon does on its own: catalog syncs, token refreshes, timers. */
    DAEMON;

    /** Made once: every audit event writes it twice (its log line and its row). */
    private final String wire = name().toLowerCase(Locale.ROOT).replace('_', '-');

    public String wire() {
        return wire;
    }
}
