package dev.tether.testsupport;

import java.util.concurrent.CountDownLatch;

/**
 * The books GraphQL server and REST API as a process of their own, for the browser runs: they run in a network
 * namespace of their own and reach only what runs there, so the script starts this beside the daemons.
 *
 * <pre>java -cp &lt;test class path&gt; dev.tether.testsupport.BooksServers &lt;graphql port&gt; &lt;rest port&gt;</pre>
 *
 * It prints {@code BOOKS_READY} once both listen and runs until it is signalled.
 */
public final class BooksServers {

    private BooksServers() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: BooksServers <graphql port> <rest port>");
        }
        BooksGraphqlServer graphql = new BooksGraphqlServer(Integer.parseInt(args[0]));
        BooksRestServer rest = new BooksRestServer(Integer.parseInt(args[1]));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            rest.close();
            graphql.close();
        }));
        System.out.println("BOOKS_READY graphql=" + graphql.endpoint() + " openapi=" + rest.documentUrl());
        new CountDownLatch(1).await();
    }
}
