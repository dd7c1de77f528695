package dev.tether.daemon;

import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The title and security of the OpenAPI document of the daemon's API, served at {@code /api/docs}: the daemon's name,
 * version and bearer token, and what Tether adds to Executor's routes.
 */
@Configuration(proxyBeanMethods = false)
class ApiDocs {

    @Bean
    OpenAPI tetherOpenApi() {
        return new OpenAPI()
                .info(new Info().title("Tether").version(Version.TETHER).description("""
                        Executor's daemon API, served by Tether. Tether's own additions: \
                        POST /api/connections/health (batch checks as one generation), \
                        GET /api/connections/health/events (server-sent verdicts) and POST /api/tools/call."""))
                .components(new Components().addSecuritySchemes("bearer",
                        new SecurityScheme().type(SecurityScheme.Type.HTTP).scheme("bearer")))
                .addSecurityItem(new SecurityRequirement().addList("bearer"));
    }
}
