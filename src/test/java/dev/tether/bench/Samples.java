package dev.tether.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/** What the start benchmarks share: one figure of their runs as p50, min and max, and clearing a run's data dir. */
final class Samples {

    private Samples() {
    }

    static <T> double p50(List<T> samples, ToDoubleFunction<T> figure) {
        double[] sorted = samples.stream().mapToDouble(figure).sorted().toArray();
        return sorted[sorted.length / 2];
    }

    static <T> double min(List<T> samples, ToDoubleFunction<T> figure) {
        return samples.stream().mapToDouble(figure).min().orElseThrow();
    }

    static <T> double max(List<T> samples, ToDoubleFunction<T> figure) {
        return samples.stream().mapToDouble(figure).max().orElseThrow();
    }

    static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
