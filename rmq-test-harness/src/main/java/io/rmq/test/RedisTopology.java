package io.rmq.test;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Which Redis deployment a test runs against. */
public enum RedisTopology {

    /** One Redis server. */
    STANDALONE,

    /** A Redis Cluster of three masters (no replicas). */
    CLUSTER;

    /**
     * A new Lettuce client for this topology's test server(s): a {@link RedisClient} for {@link #STANDALONE},
     * a {@link RedisClusterClient} for {@link #CLUSTER}. Servers start lazily, once per JVM.
     * <p>
     * The client shares one per-JVM {@code ClientResources}; the caller shuts the client down with
     * {@code shutdown()}, which leaves the shared resources alone.
     */
    public AbstractRedisClient newClient() {
        return switch (this) {
            case STANDALONE -> TestRedisServers.newStandaloneClient();
            case CLUSTER -> TestRedisServers.newClusterClient();
        };
    }

    /**
     * Fresh addresses of this topology's test server(s): the one server for {@link #STANDALONE}, every master (as
     * seeds) for {@link #CLUSTER}, with the credentials the servers need; for clients this harness does not build,
     * such as RMQ's own (share {@link TestRedisServers#resources()} with them).
     */
    public List<RedisURI> uris() {
        return switch (this) {
            case STANDALONE -> TestRedisServers.standaloneUris();
            case CLUSTER -> TestRedisServers.clusterUris();
        };
    }

    /** FLUSHALL on the standalone server, or on every master of the cluster. */
    public void flushAll() {
        switch (this) {
            case STANDALONE -> TestRedisServers.flushStandalone();
            case CLUSTER -> TestRedisServers.flushCluster();
        }
    }

    /**
     * Spring Boot properties pointing at the server(s): {@code spring.data.redis.host}/{@code port}
     * (plus {@code username}/{@code password}/{@code database} when {@code RMQ_TEST_REDIS_URL} carries them),
     * or {@code spring.data.redis.cluster.nodes=host:port,host:port,host:port}.
     */
    public Map<String, String> springProperties() {
        Map<String, String> props = new LinkedHashMap<>();
        switch (this) {
            case STANDALONE -> {
                RedisEndpoint endpoint = TestRedisServers.standalone();
                props.put("spring.data.redis.host", endpoint.host());
                props.put("spring.data.redis.port", Integer.toString(endpoint.port()));
                props.putAll(TestRedisServers.standaloneCredentialProperties());
            }
            case CLUSTER -> {
                List<RedisEndpoint> nodes = TestRedisServers.clusterNodes();
                props.put("spring.data.redis.cluster.nodes",
                        nodes.stream().map(RedisEndpoint::hostPort).collect(Collectors.joining(",")));
            }
        }
        return Map.copyOf(props);
    }

    /** {@link #springProperties()} and {@code rmq.key-prefix}: the test's own keys on the shared server(s). */
    public Map<String, String> springProperties(String keyPrefix) {
        Map<String, String> props = new LinkedHashMap<>(springProperties());
        props.put("rmq.key-prefix", keyPrefix);
        return props;
    }

    /** {@link #springProperties()} as {@code name=value} pairs (for {@code withPropertyValues}, {@code properties}). */
    public String[] propertyValues() {
        return pairs(springProperties());
    }

    /** {@link #springProperties(String)} as {@code name=value} pairs. */
    public String[] propertyValues(String keyPrefix) {
        return pairs(springProperties(keyPrefix));
    }

    private static String[] pairs(Map<String, String> props) {
        return props.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new);
    }
}
