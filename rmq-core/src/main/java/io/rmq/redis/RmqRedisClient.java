package io.rmq.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.topology.ClusterTopologyRefresh;
import io.lettuce.core.resource.ClientResources;
import org.jspecify.annotations.Nullable;

import io.rmq.redis.internal.FollowsFailover;

/**
 * The Lettuce client RMQ talks to Redis through: its own, built from where the application's Redis is (standalone,
 * Sentinel or Cluster, with its credentials and SSL), with {@link RedisClientSettings RMQ's} timeouts, reconnect,
 * disconnected behaviour and topology refresh. It shares the application's {@code ClientResources} (threads, timer,
 * event bus, tracing) when given them, and never changes the application's own client.
 * <p>
 * {@link #close()} shuts the client down; the shared resources stay the application's.
 */
public final class RmqRedisClient implements AutoCloseable {

    private final AbstractRedisClient client;
    /** The client's resources: a view of shared ones, or RMQ's own; shutting them down never touches shared ones. */
    private final ClientResources resources;
    private final String address;

    private RmqRedisClient(AbstractRedisClient client, ClientResources resources, String address) {
        this.client = client;
        this.resources = resources;
        this.address = address;
    }

    /**
     * A client of one Redis server, or of the master that Sentinels name when {@code uri} lists sentinels.
     *
     * @param uri    where Redis is, with credentials, database and {@code ssl} flag ({@code uri} itself is not changed)
     * @param ssl    key and trust material when {@code uri} uses SSL, or null for the JVM's defaults
     * @param shared the application's client resources to share, or null for resources of RMQ's own
     */
    public static RmqRedisClient standalone(RedisURI uri, @Nullable SslOptions ssl, @Nullable ClientResources shared,
            RedisClientSettings settings) {
        RedisURI applied = settings.apply(uri);
        ClientResources resources = resources(shared, settings);
        try {
            RedisClient client = RedisClient.create(resources, applied);
            client.setOptions(settings.clientOptions(ssl));
            return new RmqRedisClient(client, resources, describe(uri));
        }
        catch (RuntimeException ex) {
            resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
            throw ex;
        }
    }

    /**
     * A client of a Redis Cluster.
     *
     * @param seeds some of the cluster's nodes (the rest is discovered), with credentials and {@code ssl} flag
     * @param ssl    key and trust material when the seeds use SSL, or null for the JVM's defaults
     * @param shared the application's client resources to share, or null for resources of RMQ's own
     */
    public static RmqRedisClient cluster(List<RedisURI> seeds, @Nullable SslOptions ssl,
            @Nullable ClientResources shared, RedisClientSettings settings) {
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("A Redis Cluster client needs at least one node to start from");
        }
        List<RedisURI> applied = seeds.stream().map(settings::apply).toList();
        ClientResources resources = resources(shared, settings);
        try {
            RedisClusterClient client = new LiveNodesClusterClient(resources, applied);
            client.setOptions(settings.clusterClientOptions(ssl));
            return new RmqRedisClient(client, resources, "cluster " + seeds.stream().map(RmqRedisClient::hostPort)
                    .collect(Collectors.joining(", ", "[", "]")));
        }
        catch (RuntimeException ex) {
            resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
            throw ex;
        }
    }

    private static ClientResources resources(ClientResources shared, RedisClientSettings settings) {
        return shared == null ? settings.ownResources() : settings.resourcesSharing(shared);
    }

    /** The Lettuce client, a {@link RedisClient} or a {@link RedisClusterClient}, for {@code Rmq.create}. */
    public AbstractRedisClient client() {
        return client;
    }

    public boolean isCluster() {
        return client instanceof RedisClusterClient;
    }

    /** Where the client connects, for messages: host:port, the Sentinel master, or the cluster's seeds. */
    public String address() {
        return address;
    }

    private static String describe(RedisURI uri) {
        if (!uri.getSentinels().isEmpty()) {
            return "master '" + uri.getSentinelMasterId() + "' of sentinels " + uri.getSentinels().stream()
                    .map(RmqRedisClient::hostPort).collect(Collectors.joining(", ", "[", "]"));
        }
        return hostPort(uri);
    }

    private static String hostPort(RedisURI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    @Override
    public void close() {
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        finally {
            resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return "RMQ's Redis client of " + address;
    }

    /**
     * A cluster client whose topology refresh asks only live nodes. Lettuce's refresh queries the nodes of the
     * current view and then "discovers" every further node the answers name, failed ones included: a master that
     * died and failed over would be dialled on every refresh, for as long as the application runs, each time
     * logging "Unable to connect". Here the discovery skips what {@link RedisClientSettings#LIVE_NODES} drops (the
     * node filter removes the same nodes from the view itself).
     */
    static final class LiveNodesClusterClient extends RedisClusterClient implements FollowsFailover {

        LiveNodesClusterClient(ClientResources resources, Iterable<RedisURI> seeds) {
            super(resources, seeds);
        }

        @Override
        protected ClusterTopologyRefresh createTopologyRefresh() {
            return new LiveNodesRefresh(super.createTopologyRefresh());
        }
    }

    /** Loads the views of the given nodes, then those of the live nodes they name that were not asked yet. */
    record LiveNodesRefresh(ClusterTopologyRefresh delegate) implements ClusterTopologyRefresh {

        @Override
        public CompletionStage<Map<RedisURI, Partitions>> loadViews(Iterable<RedisURI> seed, Duration connectTimeout,
                boolean discovery) {
            CompletionStage<Map<RedisURI, Partitions>> asked = delegate.loadViews(seed, connectTimeout, false);
            if (!discovery) {
                return asked;
            }
            return asked.thenCompose(views -> {
                List<RedisURI> more = unasked(views, seed);
                if (more.isEmpty()) {
                    return CompletableFuture.completedFuture(views);
                }
                return delegate.loadViews(more, connectTimeout, false).handle((extra, error) -> {
                    if (error != null || extra.isEmpty()) {
                        return views; // what the first nodes said is a view of its own
                    }
                    Map<RedisURI, Partitions> all = new LinkedHashMap<>(views);
                    all.putAll(extra);
                    return all;
                });
            });
        }

        /** Live nodes the views name that neither answered nor were asked (by node id and by address). */
        static List<RedisURI> unasked(Map<RedisURI, Partitions> views, Iterable<RedisURI> seed) {
            Set<String> answered = new HashSet<>();
            Set<String> addresses = new HashSet<>();
            for (RedisURI uri : seed) {
                addresses.add(hostPort(uri));
            }
            views.keySet().forEach(uri -> addresses.add(hostPort(uri)));
            for (Partitions view : views.values()) {
                for (RedisClusterNode node : view) {
                    if (node.is(RedisClusterNode.NodeFlag.MYSELF)) {
                        answered.add(node.getNodeId());
                    }
                }
            }
            List<RedisURI> more = new ArrayList<>();
            for (Partitions view : views.values()) {
                for (RedisClusterNode node : view) {
                    RedisURI uri = node.getUri();
                    if (uri == null || answered.contains(node.getNodeId()) || !RedisClientSettings.isLive(node)
                            || !addresses.add(hostPort(uri))) {
                        continue;
                    }
                    more.add(uri);
                }
            }
            return more;
        }
    }
}
