package dev.tether.calls;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Executor's tool search, so that {@code tools.search()} ranks and scores as it does: a query's words are matched
 * against each tool's path (weight 12), integration (8), name (10) and description (5); an exact field scores most,
 * then a prefix, then the phrase inside it, then each word whole, as a word prefix, or anywhere; a tool that misses
 * too many words of the query is left out.
 */
final class ToolSearch {

    /** What a search ranks: a tool's path under {@code tools.} and the fields a query can match. */
    record Candidate(String path, String integration, String name, String description) {
    }

    private static final int PATH = 12;
    private static final int INTEGRATION = 8;
    private static final int NAME = 10;
    private static final int DESCRIPTION = 5;

    private ToolSearch() {
    }

    /** Matching candidates, best first; ties by path. */
    static List<Map<String, Object>> rank(List<Candidate> candidates, String query, Optional<String> namespace) {
        String normalized = normalize(query);
        List<String> words = tokens(query);
        if (normalized.isEmpty() || words.isEmpty()) {
            return List.of();
        }
        record Scored(Candidate candidate, int score) {
        }
        return candidates.stream()
                .filter(candidate -> namespace.map(ns -> inNamespace(candidate, ns)).orElse(true))
                .map(candidate -> new Scored(candidate, score(candidate, normalized, words)))
                .filter(scored -> scored.score() > 0)
                .sorted(Comparator.comparingInt(Scored::score).reversed().thenComparing(scored -> scored.candidate().path()))
                .map(scored -> result(scored.candidate(), scored.score()))
                .toList();
    }

    /** The page at {@code offset}: {@code {items, total, hasMore, nextOffset}}. */
    static Map<String, Object> page(List<?> all, int offset, int limit) {
        int start = Math.min(Math.max(offset, 0), all.size());
        List<?> items = all.subList(start, Math.min(all.size(), start + limit));
        int consumed = start + items.size();
        boolean more = consumed < all.size();
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("items", items);
        page.put("total", all.size());
        page.put("hasMore", more);
        page.put("nextOffset", more ? consumed : null);
        return page;
    }

    private static Map<String, Object> result(Candidate candidate, int score) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("path", candidate.path());
        result.put("name", candidate.name());
        if (candidate.description() != null) {
            result.put("description", candidate.description());
        }
        result.put("integration", candidate.integration());
        result.put("score", score);
        return result;
    }

    /** Zero when the candidate does not match. */
    private static int score(Candidate candidate, String query, List<String> words) {
        Field path = new Field(candidate.path());
        Field name = new Field(candidate.name());
        Field[] fields = { path, new Field(candidate.integration()), name, new Field(candidate.description()) };
        int[] weights = { PATH, INTEGRATION, NAME, DESCRIPTION };
        Set<String> matched = new HashSet<>();
        boolean phrase = false;
        int score = 0;
        for (int i = 0; i < fields.length; i++) {
            Field field = fields[i];
            if (field.raw().isEmpty()) {
                continue;
            }
            int weight = weights[i];
            boolean contains = field.raw().contains(query);
            phrase |= contains;
            if (field.raw().equals(query)) {
                score += weight * 14;
            }
            else if (field.raw().startsWith(query)) {
                score += weight * 9;
            }
            else if (contains) {
                score += weight * 6;
            }
            for (String word : words) {
                if (field.tokens().contains(word)) {
                    score += weight * 4;
                    matched.add(word);
                }
                else if (field.tokens().stream().anyMatch(token -> token.startsWith(word) || word.startsWith(token))) {
                    score += weight * 2;
                    matched.add(word);
                }
                else if (field.raw().contains(word)) {
                    score += weight;
                    matched.add(word);
                }
            }
        }
        if (matched.isEmpty()) {
            return 0;
        }
        double coverage = (double) matched.size() / words.size();
        double needed = words.size() <= 2 ? 1 : 0.6;
        if (coverage < needed && !phrase) {
            return 0;
        }
        score += coverage == 1 ? 25 : (int) Math.round(coverage * 10);
        if (first(path).equals(words.get(0)) || first(name).equals(words.get(0))) {
            score += 8;
        }
        if (normalize(candidate.path()).equals(query) || normalize(candidate.name()).equals(query)) {
            score += 20;
        }
        return score;
    }

    private static String first(Field field) {
        return field.tokens().isEmpty() ? "" : field.tokens().get(0);
    }

    private static boolean inNamespace(Candidate candidate, String namespace) {
        List<String> wanted = tokens(namespace);
        if (wanted.isEmpty()) {
            return true;
        }
        return startsWith(tokens(candidate.integration()), wanted) || startsWith(tokens(candidate.path()), wanted);
    }

    private static boolean startsWith(List<String> tokens, List<String> prefix) {
        return tokens.size() >= prefix.size() && tokens.subList(0, prefix.size()).equals(prefix);
    }

    /** camelCase split, separators {@code _ . / : -} as spaces, lower case. */
    static String normalize(String text) {
        if (text == null) {
            return "";
        }
        return text.replaceAll("([a-z0-9])([A-Z])", "$1 $2").replaceAll("[_./:-]+", " ").toLowerCase(Locale.ROOT).strip();
    }

    static List<String> tokens(String text) {
        return new ArrayList<>(Arrays.stream(normalize(text).split("[^a-z0-9]+")).filter(token -> !token.isEmpty()).toList());
    }

    private record Field(String raw, List<String> tokens) {

        Field(String text) {
            this(normalize(text), ToolSearch.tokens(text));
        }
    }
}
