package dev.tether.openapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.swagger.v3.core.util.Json;
import org.junit.jupiter.api.Test;

/**
 * What Executor 1.5.9's Discovery converter does that Google's OAuth2 document (the API tests' fixture) does not show:
 * reserved path expansion, repeated parameters, a method's parameter over the document's, two methods on one path,
 * scopes compacted for the consent screen. The converted document goes through the same parser and extraction as any
 * spec, so the tool names checked here are the ones an agent calls.
 */
class GoogleDiscoveryTest {

    private static final String DOCUMENT = """
            {"kind": "discovery#restDescription", "name": "storage", "version": "v1", "title": "Cloud Storage JSON API",
             "rootUrl": "https://storage.googleapis.com/", "servicePath": "storage/v1/",
             "auth": {"oauth2": {"scopes": {
               "https://mail.google.com/": {"description": "All of Gmail"},
               "https://www.googleapis.com/auth/gmail.readonly": {"description": "Read Gmail"},
               "https://www.googleapis.com/auth/chat.bot": {"description": "Chat bots"},
               "https://www.googleapis.com/auth/userinfo.email": {"description": "Your email"}}}},
             "parameters": {"alt": {"type": "string", "location": "query", "default": "json", "enum": ["json", "media"]},
                            "userProject": {"type": "string", "location": "query", "description": "global"}},
             "schemas": {"Object": {"id": "Object", "type": "object", "properties": {"name": {"type": "string"},
                           "metadata": {"type": "object", "additionalProperties": {"type": "string"}}}},
                         "Objects": {"id": "Objects", "type": "object", "properties": {"items": {"type": "array", "items": {"$ref": "Object"}}}}},
             "resources": {"objects": {"methods": {
               "get": {"id": "storage.objects.get", "path": "b/{bucket}/o/{+object}", "httpMethod": "GET",
                       "parameters": {"bucket": {"type": "string", "location": "path", "required": true},
                                      "object": {"type": "string", "location": "path", "required": true},
                                      "userProject": {"type": "string", "location": "query", "description": " the method's own "}},
                       "response": {"$ref": "Object"}, "scopes": ["https://mail.google.com/"]},
               "list": {"id": "storage.objects.list", "path": "b/{bucket}/o", "httpMethod": "GET",
                        "parameters": {"bucket": {"type": "string", "location": "path", "required": true},
                                       "fields": {"type": "string", "location": "query", "repeated": true}},
                        "response": {"$ref": "Objects"}},
               "insert": {"id": "storage.objects.insert", "path": "b/{bucket}/o", "httpMethod": "POST",
                          "parameters": {"bucket": {"type": "string", "location": "path", "required": true}},
                          "request": {"$ref": "Object"}, "response": {"$ref": "Object"}},
               "watchAll": {"id": "storage.objects.watchAll", "path": "b/{bucket}/o", "httpMethod": "GET",
                            "parameters": {"bucket": {"type": "string", "location": "path", "required": true}}}}}}}
            """;

    @Test
    void convertsAsExecutorDoes() throws Exception {
        assertThat(GoogleDiscovery.recognises(DOCUMENT)).isTrue();
        assertThat(GoogleDiscovery.recognises("{\"openapi\": \"3.0.0\", \"info\": {\"description\": \"not a discovery#restDescription\"}}")).isFalse();
        GoogleDiscovery.Conversion conversion = GoogleDiscovery.convert(DOCUMENT, "https://storage.googleapis.com/$discovery/rest?version=v1");
        JsonNode spec = Json.mapper().readTree(conversion.specText());

        assertThat(conversion.title()).isEqualTo("Cloud Storage JSON API");
        assertThat(spec.at("/servers/0/url").asText()).isEqualTo("https://storage.googleapis.com/storage/v1/");
        assertThat(spec.at("/x-executor-origin/discoveryUrl").asText()).isEqualTo("https://www.googleapis.com/discovery/v1/apis/storage/v1/rest");
        assertThat(spec.path("paths").fieldNames()).toIterable()
                .as("watchAll's GET on a path list already has: a path of its own").containsExactly("/b/{bucket}/o/{object}", "/b/{bucket}/o", "/objects.watchAll");

        JsonNode get = spec.at("/paths/~1b~1{bucket}~1o~1{object}/get");
        assertThat(get.path("x-executor-pathTemplate").asText()).isEqualTo("/b/{bucket}/o/{+object}");
        assertThat(get.path("parameters").findValuesAsText("name")).as("the document's parameters first, the method's own in their place")
                .containsExactly("alt", "userProject", "bucket", "object");
        assertThat(get.at("/parameters/1/description").asText()).isEqualTo("the method's own");
        assertThat(get.at("/parameters/3/allowReserved").asBoolean()).isTrue();
        assertThat(get.at("/parameters/3/required").asBoolean()).isTrue();
        assertThat(get.path("security").toString()).isEqualTo("[{\"googleOAuth2\":[\"https://mail.google.com/\"]}]");
        JsonNode list = spec.at("/paths/~1b~1{bucket}~1o/get");
        assertThat(list.at("/parameters/3/schema/type").asText()).isEqualTo("array");
        assertThat(list.at("/parameters/3/schema/items/type").asText()).isEqualTo("string");
        assertThat(list.at("/parameters/3/explode").asBoolean()).isTrue();
        assertThat(spec.at("/components/schemas/Object/properties/metadata/additionalProperties/type").asText()).isEqualTo("string");
        assertThat(spec.at("/components/schemas/Objects/properties/items/items/$ref").asText()).isEqualTo("#/components/schemas/Object");
        assertThat(conversion.authenticationTemplate()).containsExactly(Map.of("slug", "googleOAuth2", "kind", "oauth2",
                "authorizationUrl", "https://accounts.google.com/o/oauth2/v2/auth", "tokenUrl", "https://oauth2.googleapis.com/token",
                "scopes", List.of("https://mail.google.com/", "email")));
        assertThat(spec.at("/components/securitySchemes/googleOAuth2/flows/authorizationCode/scopes/email").asText()).isEqualTo("Your email");

        Map<String, Object> doc = OpenApiDocuments.parse(conversion.specText(), 1 << 20);
        assertThat(OpenApiExtraction.extract(doc).operations()).extracting(operation -> operation.tool().name() + " " + operation.method())
                .containsExactlyInAnyOrder("objects.get get", "objects.list get", "objects.insert post", "objects.watchAll get");
    }

    @Test
    void aDocumentWithoutItsRootUrlIsAParseError() {
        assertThatThrownBy(() -> GoogleDiscovery.convert(DOCUMENT.replace("\"rootUrl\"", "\"root\""), null))
                .isInstanceOf(OpenApiParseException.class).hasMessage("Google Discovery document is missing one of: name, version, rootUrl");
        assertThatThrownBy(() -> GoogleDiscovery.convert("{\"kind\": \"discovery#restDescription\", ", null))
                .isInstanceOf(OpenApiParseException.class).hasMessage("Failed to parse Google Discovery document");
    }
}
