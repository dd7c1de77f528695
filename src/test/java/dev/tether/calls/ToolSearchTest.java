package dev.tether.calls;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/**
 * Ranking and scores of {@code tools.search()}, against what a running Executor 1.5.9 daemon answered for the
 * same tools (server-everything's, connected as {@code org/default}).
 */
class ToolSearchTest {

    private static final List<ToolSearch.Candidate> EVERYTHING = List.of(
            everything("echo", "Echoes back the input string"),
            everything("get_sum", "Returns the sum of two numbers"),
            everything("get_env", "Returns all environment variables, helpful for debugging MCP server configuration"),
            everything("trigger_url_elicitation", "Trigger a URL elicitation so the client can direct the user to a browser flow."
                    + " Supports two mechanisms: the request path (elicitation/create, default) which awaits the user's response,"
                    + " and the error path (UrlElicitationRequiredError, -32042) which signals the client to handle URL"
                    + " elicitation via the error response. Set errorPath=true to use the error path."),
            new ToolSearch.Candidate("executor.coreTools.connections.list", "executor", "coreTools.connections.list",
                    "List saved connections (the credential for one integration). Never returns the credential value."
                            + " Optionally filter by integration or owner."));

    private static ToolSearch.Candidate everything(String tool, String description) {
        return new ToolSearch.Candidate("everything.org.default." + tool, "everything", tool, description);
    }

    @Test
    void scoresAsExecutorDoes() {
        List<Map<String, Object>> echo = ToolSearch.rank(EVERYTHING, "echo", Optional.empty());
        assertThat(echo).singleElement().satisfies(hit -> {
            assertThat(hit).containsEntry("path", "everything.org.default.echo").containsEntry("name", "echo")
                    .containsEntry("integration", "everything").containsEntry("score", 408);
            assertThat(hit.keySet()).containsExactly("path", "name", "description", "integration", "score");
        });

        List<Map<String, Object>> sum = ToolSearch.rank(EVERYTHING, "sum", Optional.of("everything"));
        assertThat(sum).extracting(hit -> hit.get("path"), hit -> hit.get("score")).containsExactly(
                org.assertj.core.groups.Tuple.tuple("everything.org.default.get_sum", 295),
                org.assertj.core.groups.Tuple.tuple("everything.org.default.trigger_url_elicitation", 35));
    }

    @Test
    void aNamespaceOrAnEmptyQueryNarrowsToNothingElse() {
        assertThat(ToolSearch.rank(EVERYTHING, "connections", Optional.of("everything"))).isEmpty();
        assertThat(ToolSearch.rank(EVERYTHING, "connections", Optional.empty())).extracting(hit -> hit.get("path"))
                .containsExactly("executor.coreTools.connections.list");
        assertThat(ToolSearch.rank(EVERYTHING, "  ", Optional.empty())).isEmpty();
        assertThat(ToolSearch.rank(EVERYTHING, "zebra", Optional.empty())).isEmpty();
    }

    @Test
    void pagesCarryTheNextOffset() {
        List<Integer> all = List.of(1, 2, 3, 4, 5);
        assertThat(ToolSearch.page(all, 0, 2)).containsEntry("items", List.of(1, 2)).containsEntry("total", 5)
                .containsEntry("hasMore", true).containsEntry("nextOffset", 2);
        assertThat(ToolSearch.page(all, 4, 2)).containsEntry("items", List.of(5)).containsEntry("hasMore", false)
                .containsEntry("nextOffset", null);
        assertThat(ToolSearch.page(all, 9, 2)).containsEntry("items", List.of()).containsEntry("total", 5);
    }
}
