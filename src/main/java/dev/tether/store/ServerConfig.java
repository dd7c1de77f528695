package dev.tether.store;

/** How an MCP integration reaches its server: a stdio child or a remote endpoint. */
public sealed interface ServerConfig permits StdioConfig, RemoteConfig {

    /** Executor's name of the transport: {@code stdio} or {@code remote}. */
    String transport();
}
