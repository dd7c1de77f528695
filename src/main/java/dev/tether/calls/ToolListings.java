package dev.tether.calls;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.views.Views.ToolView;
import dev.tether.calls.builtin.BuiltinTool;
import dev.tether.calls.builtin.BuiltinTools;
import dev.tether.catalog.CatalogService;
import dev.tether.catalog.CatalogService.ConnectionTools;
import dev.tether.identity.Principals;
import dev.tether.policy.Policies;
import dev.tether.store.Owner;
import dev.tether.store.Policy;

/**
 * The answers of {@code GET /api/tools}, kept encoded between requests.
 *
 * <p>Building, sorting, policy-checking and encoding every view took most of a request over thousands of stored
 * tools. Each request still gathers what its answer is made of (the catalogs of the matching connections, stale
 * ones synced as before, and the policies), and reuses the tools kept for its selection while those sources equal
 * the ones they were made from. Nothing has to be told of a change (a sync, a removed connection, a policy, the
 * same from another replica): a changed source is simply unequal, so a kept answer is never older than the store.
 * Comparing is cheap because an unchanged catalog is the very list the store holds.
 */
@Component
public final class ToolListings {

    /** The selections whose answers are kept; past it they are all dropped, rather than grow with odd filters. */
    private static final int KEPT_SELECTIONS = 256;

    /** Which tools a request asks for, all but its query. */
    public record Selection(Optional<String> integration, Optional<Owner> owner, Optional<String> connection, boolean includeBlocked) {

        boolean wantsBuiltins() {
            return integration.map(BuiltinTool.INTEGRATION::equals).orElse(true)
                    && owner.map(o -> o.wire().equals(BuiltinTool.OWNER)).orElse(true)
                    && connection.map(BuiltinTool.CONNECTION::equals).orElse(true);
        }
    }

    /** What an answer is made of; the built-ins never change while the daemon runs. */
    private record Sources(List<ConnectionTools> connected, List<Policy> blocking) {
    }

    /** One listed tool: what a query is matched against, lower-cased, and its JSON as the answer holds it. */
    private record Listed(String name, String description, byte[] json) {

        boolean matches(String needle) {
            return needle.isEmpty() || name.contains(needle) || description.contains(needle);
        }
    }

    /**
     * The tools of a selection, and the whole answer joined once, as most requests ask for it. That array is handed
     * to every response as it is: the byte-array encoder wraps it without a copy, and nothing writes into it.
     */
    private record Listing(List<Listed> tools, byte[] all) {

        static Listing of(List<Listed> tools) {
            return new Listing(tools, join(tools));
        }

        byte[] answer(String needle) {
            return needle.isEmpty() ? all : join(tools.stream().filter(tool -> tool.matches(needle)).toList());
        }
    }

    private record Kept(Sources sources, Listing listing) {
    }

    /**
     * Whose selection: users see different connections, so each keeps its own answers (an answer is made of its sources
     * alone, so sharing would leak nothing, but users taking turns would make every request build its answer anew).
     */
    private record Asker(String subject, Selection selection) {
    }

    private final CatalogService catalogs;
    private final BuiltinTools builtins;
    private final Policies policies;
    private final JsonMapper json;
    private final Map<Asker, Kept> kept = new ConcurrentHashMap<>();

    ToolListings(CatalogService catalogs, BuiltinTools builtins, Policies policies, JsonMapper json) {
        this.catalogs = catalogs;
        this.builtins = builtins;
        this.policies = policies;
        this.json = json;
    }

    /**
     * The JSON array {@code GET /api/tools} answers: Executor's built-ins, then the selected connections' tools by
     * address, without those a policy blocks unless asked for, and only those whose name or description contains
     * {@code query} (ignoring case) when one is given.
     */
    public Mono<byte[]> list(Selection selection, String query) {
        String needle = query.toLowerCase(Locale.ROOT);
        // Tools a policy blocks are left out unless asked for, as Executor does.
        Mono<List<Policy>> blocking = selection.includeBlocked() ? Mono.just(List.of()) : policies.list().collectList();
        return Principals.current().flatMap(caller -> blocking.flatMap(rules -> catalogs.tools(selection.integration(), selection.owner(),
                                selection.connection())
                        .collectList()
                        .map(connected -> new Sources(connected, rules)))
                .map(sources -> listing(new Asker(caller.subject(), selection), sources).answer(needle)));
    }

    private Listing listing(Asker asker, Sources sources) {
        Selection selection = asker.selection();
        Kept known = kept.get(asker);
        Listing listing = known != null && known.sources().equals(sources) ? known.listing() : Listing.of(listed(selection, sources));
        if (known == null && kept.size() >= KEPT_SELECTIONS) {
            kept.clear();
        }
        // The newest sources are kept even when equal, so that the next comparison is one of identical lists again.
        kept.put(asker, new Kept(sources, listing));
        return listing;
    }

    private List<Listed> listed(Selection selection, Sources sources) {
        Stream<ToolView> builtin = selection.wantsBuiltins() ? builtins.listed().stream().map(BuiltinTool::listing) : Stream.empty();
        Stream<ToolView> connected = sources.connected().stream()
                .flatMap(tools -> ToolView.listed(tools).stream())
                .sorted(Comparator.comparing(ToolView::address));
        List<Policy> rules = sources.blocking();
        return Stream.concat(builtin, connected)
                .filter(tool -> rules.isEmpty() || !Policies.decide(ToolAddress.path(tool.address()), false, rules).blocked())
                .map(tool -> new Listed(tool.name().toLowerCase(Locale.ROOT), tool.description().toLowerCase(Locale.ROOT),
                        json.writeValueAsBytes(tool)))
                .toList();
    }

    /** The array Jackson writes for these tools' views: their JSON, comma-separated, in brackets. */
    private static byte[] join(List<Listed> tools) {
        int length = 2 + Math.max(0, tools.size() - 1) + tools.stream().mapToInt(tool -> tool.json().length).sum();
        byte[] answer = new byte[length];
        answer[0] = '[';
        int at = 1;
        for (Listed tool : tools) {
            if (at > 1) {
                answer[at++] = ',';
            }
            System.arraycopy(tool.json(), 0, answer, at, tool.json().length);
            at += tool.json().length;
        }
        answer[at] = ']';
        return answer;
    }
}
