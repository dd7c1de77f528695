package dev.tether.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
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

    /**
     * The CPU time all cores of the machine have spent busy since boot (user, nice, system, irq, softirq and steal of
     * {@code /proc/stat}'s first line, in ticks of 10 ms); zero where there is none.
     */
    static Duration busyTime() {
        try {
            long[] ticks = Arrays.stream(Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+"))
                    .skip(1).mapToLong(Long::parseLong).toArray();
            return Duration.ofMillis((ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]) * 10);
        } catch (IOException | RuntimeException unknown) {
            return Duration.ZERO;
        }
    }
}
