package dev.tether.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What the stdout reader takes a server's line for before any parse: the answer to a call, or the SDK's business. */
class ResponseScanTest {

    @Test
    void aResultIsFoundWhereItLiesWithItsIdAndItsIsError() {
        String result = "{\"content\":[{\"type\":\"text\",\"text\":\"id \\\"x\\\" {\"}],\"isError\":true,\"_meta\":{\"id\":\"other\"}}";
        String line = "{\"jsonrpc\":\"2.0\",\"id\":\"tether-call-7\",\"result\":" + result + "}";

        ResponseScan scan = ResponseScan.of(line);

        assertThat(scan).isNotNull();
        assertThat(scan.id()).isEqualTo("tether-call-7");
        assertThat(scan.failed()).isFalse();
        assertThat(scan.toolError()).isTrue();
        assertThat(line.substring(scan.valueStart(), scan.valueEnd())).isEqualTo(result);
    }

    @Test
    void theIdMayComeAfterTheResultAndANestedIsErrorIsNotTheResults() {
        String result = "{\"structuredContent\":{\"isError\":true},\"content\":[]}";
        String line = "{\"result\":" + result + ",\"id\":\"a\",\"jsonrpc\":\"2.0\"}";

        ResponseScan scan = ResponseScan.of(line);

        assertThat(scan.id()).isEqualTo("a");
        assertThat(scan.toolError()).isFalse();
        assertThat(line.substring(scan.valueStart(), scan.valueEnd())).isEqualTo(result);
    }

    @Test
    void anErrorIsFoundAsAnError() {
        String error = "{\"code\":-32602,\"message\":\"Unknown tool\"}";
        String line = "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"error\":" + error + "}";

        ResponseScan scan = ResponseScan.of(line);

        assertThat(scan.failed()).isTrue();
        assertThat(line.substring(scan.valueStart(), scan.valueEnd())).isEqualTo(error);
    }

    @Test
    void aNumericIdIsNoneOfTethersCalls() {
        assertThat(ResponseScan.of("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}").id()).isNull();
    }

    @Test
    void aResultThatIsNoObjectHasNoPosition() {
        ResponseScan scan = ResponseScan.of("{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"result\":[1]}");

        assertThat(scan.id()).isEqualTo("c");
        assertThat(scan.valueStart()).isEqualTo(-1);
    }

    @Test
    void requestsNotificationsAndWhatIsNoJsonObjectAreNotResponses() {
        assertThat(ResponseScan.of("{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"elicitation/create\",\"params\":{}}")).isNull();
        assertThat(ResponseScan.of("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}")).isNull();
        assertThat(ResponseScan.of("not json")).isNull();
        assertThat(ResponseScan.of("[1,2]")).isNull();
        assertThat(ResponseScan.of("{\"id\":\"e\",\"result\":{}")).isNull();
        assertThat(ResponseScan.of("{\"id\":\"e\",\"result\":{}} trailing")).isNull();
    }
}
