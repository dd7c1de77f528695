package dev.tether.testsupport;

/** A scrape of {@code /actuator/prometheus}, read by sample name and labels. */
public record PrometheusScrape(String text) {

    /**
     * The sum of every sample named {@code sample} (exactly, e.g. {@code tether_children_spawned_total})
     * that carries all {@code labels} given as {@code key, value, key, value...}; 0 when there is none.
     */
    public double sum(String sample, String... labels) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !(line.startsWith(sample + "{") || line.startsWith(sample + " "))) {
                continue;
            }
            boolean matches = true;
            for (int i = 0; i < labels.length; i += 2) {
                matches &= line.contains(labels[i] + "=\"" + labels[i + 1] + "\"");
            }
            if (matches) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    public double spawned(String kind) {
        return sum("tether_children_spawned_total", "kind", kind);
    }

    public double spawned() {
        return sum("tether_children_spawned_total");
    }

    public double live() {
        return sum("tether_children_live");
    }

    public double healthChecks(String outcome) {
        return sum("tether_health_checks_total", "outcome", outcome);
    }
}
