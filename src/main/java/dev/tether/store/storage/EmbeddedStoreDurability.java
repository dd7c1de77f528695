package dev.tether.store.storage;

import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Option;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.r2dbc.autoconfigure.ConnectionFactoryOptionsBuilderCustomizer;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcProperties;
import org.springframework.stereotype.Component;

/**
 * Makes an embedded H2 store write each commit to its file before the commit returns: H2 by default delays that
 * by up to half a second ({@code WRITE_DELAY=500}), so a {@code kill -9} lost writes that had been answered
 * {@code 2xx} (issue 18: 50 of 154 in six rounds). {@code WRITE_DELAY=0} is added to whatever H2 URL is
 * configured, the default one or a user's; it must be given each time the database is opened, because the value
 * {@code SET WRITE_DELAY} persists is shown after a re-open but not applied to the file store (H2 2.4). Not
 * {@code fsync}: a commit is in the operating system's hands, which a process kill does not lose.
 */
@Component
final class EmbeddedStoreDurability implements ConnectionFactoryOptionsBuilderCustomizer {

    static final String NO_WRITE_DELAY = "WRITE_DELAY=0";
    private static final Option<String> H2_OPTIONS = Option.valueOf("options");

    private final R2dbcProperties properties;

    EmbeddedStoreDurability(R2dbcProperties properties) {
        this.properties = properties;
    }

    @Override
    public void customize(ConnectionFactoryOptions.Builder builder) {
        String url = properties.getUrl();
        if (url == null || !url.startsWith("r2dbc:h2:")) {
            return;
        }
        Object given = ConnectionFactoryOptions.parse(url).getValue(H2_OPTIONS);
        builder.option(H2_OPTIONS, options(given == null ? null : given.toString()));
    }

    /** H2's {@code ;}-separated options with {@code WRITE_DELAY=0} last, so that it wins over a value given before. */
    static String options(@Nullable String given) {
        return given == null || given.isBlank() ? NO_WRITE_DELAY : given + ";" + NO_WRITE_DELAY;
    }
}
