package dev.tether.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A stand-in for 1Password's {@code op} CLI, which Debian does not package: a shell script that answers
 * {@code op vault list --format=json} as {@code op} does for one signed-in desktop account and one service-account
 * token, and fails as {@code op} does (exit 1, a message on stderr) for anything else. Tether runs it as it runs
 * {@code op}: a real child process, its arguments and environment as {@code op} gets them.
 */
final class StandInOp {

    static final String ACCOUNT = "team.1password.com";
    static final String TOKEN = "ops_stand-in-token";

    private StandInOp() {
    }

    /**
     * Writes the script (executable) in a directory of its own and returns it; {@code tether.onepassword.cli} points
     * at it. Not in the data dir, whose files Tether makes owner-only and not executable.
     */
    static Path write() {
        String script = """
                #!/bin/sh
                signed_in=no
                [ "$OP_SERVICE_ACCOUNT_TOKEN" = "%s" ] && signed_in=yes
                prev=""
                for arg in "$@"; do
                  [ "$prev" = "--account" ] && [ "$arg" = "%s" ] && signed_in=yes
                  prev="$arg"
                done
                if [ "$1 $2 $3" = "vault list --format=json" ] && [ $signed_in = yes ]; then
                  echo '[{"id":"v2","name":"Beta","content_version":3},{"id":"v1","name":"Alpha","content_version":7}]'
                  exit 0
                fi
                echo "[ERROR] You are not currently signed in." >&2
                exit 1
                """.formatted(TOKEN, ACCOUNT);
        try {
            Path path = Files.createTempDirectory("tether-stand-in-op").resolve("op");
            path.getParent().toFile().deleteOnExit();
            path.toFile().deleteOnExit();
            Files.writeString(path, script);
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx------"));
            return path;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
