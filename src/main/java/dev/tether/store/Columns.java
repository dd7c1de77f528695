package dev.tether.store;

import io.r2dbc.spi.Readable;

/**
 * Reading a column that the schema declares {@code NOT NULL}: R2DBC types every value as nullable, and a null here
 * means that the schema and the code disagree, which is a bug to report by the column's name.
 */
public final class Columns {

    private Columns() {
    }

    public static String text(Readable row, String column) {
        return required(row, column, String.class);
    }

    public static long number(Readable row, String column) {
        return required(row, column, Long.class);
    }

    private static <T> T required(Readable row, String column, Class<T> type) {
        T value = row.get(column, type);
        if (value == null) {
            throw new IllegalStateException("column " + column + " is null, but the schema declares it NOT NULL");
        }
        return value;
    }
}
