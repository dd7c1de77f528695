package dev.tether.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A benchmark's {@code name=value} arguments, each with a default when not given. */
record BenchArguments(Map<String, String> given) {

    static BenchArguments parse(String[] argv) {
        Map<String, String> given = new HashMap<>();
        for (String arg : argv) {
            String[] nameAndValue = arg.split("=", 2);
            if (nameAndValue.length != 2) {
                throw new IllegalArgumentException("expected name=value, got " + arg);
            }
            given.put(nameAndValue[0], nameAndValue[1]);
        }
        return new BenchArguments(Map.copyOf(given));
    }

    int integer(String name, int fallback) {
        return given.containsKey(name) ? Integer.parseInt(given.get(name)) : fallback;
    }

    String text(String name, String fallback) {
        return given.getOrDefault(name, fallback);
    }

    double decimal(String name, double fallback) {
        return given.containsKey(name) ? Double.parseDouble(given.get(name)) : fallback;
    }

    /** Arguments named like daemon settings ({@code --tether.x=y}), to hand to the daemon as given. */
    List<String> daemonSettings() {
        return given.entrySet().stream().filter(e -> e.getKey().startsWith("--tether."))
                .map(e -> e.getKey() + "=" + e.getValue()).sorted().toList();
    }
}
