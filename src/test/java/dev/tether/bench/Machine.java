package dev.tether.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What a benchmark prints of the machine beside its figures: on a shared machine they mean little without it. */
final class Machine {

    private Machine() {
    }

    /** The 1, 5 and 15 minute load averages, as {@code /proc/loadavg} has them; {@code ?} where there is none. */
    static String loadAverage() {
        try {
            return String.join(" ", List.of(Files.readString(Path.of("/proc/loadavg")).split(" ")).subList(0, 3));
        } catch (IOException unknown) {
            return "?";
        }
    }
}
