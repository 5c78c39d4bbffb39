package io.rmq.test;

import java.util.Objects;

/**
 * Address of one test Redis server.
 *
 * @param host host name or IP literal (our own servers always use {@code 127.0.0.1})
 * @param port TCP port
 */
public record RedisEndpoint(String host, int port) {

    public RedisEndpoint {
        Objects.requireNonNull(host, "host");
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /** {@code redis://host:port} (IPv6 literals are bracketed). */
    public String uri() {
        return "redis://" + hostPort();
    }

    /** {@code host:port}, as used by {@code spring.data.redis.cluster.nodes}. */
    public String hostPort() {
        return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
    }

    @Override
    public String toString() {
        return hostPort();
    }
}
