package io.rmq.redis;

import java.time.Duration;
import java.util.function.Predicate;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.ClientOptions.DisconnectedBehavior;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;
import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.SilentConnectionGuard;

/**
 * How the Lettuce client that RMQ uses for itself ({@link RmqRedisClient}) behaves, and the one place that turns
 * these settings into Lettuce's options. An application's own client is never given them: RMQ builds its own.
 *
 * @param connectTimeout        longest a connection attempt may take (also a topology query's connect)
 * @param commandTimeout        longest any command waits for its reply before Lettuce cancels it (so that it is not
 *                              sent later either); also the timeout of synchronous calls and of topology queries
 * @param reconnectDelayMax     longest wait between two reconnect attempts (exponential from 50 ms); Lettuce's own
 *                              default grows to 30 s, which kept consumers away for seconds after Redis was back
 * @param disconnectedBehavior  what a command does while the connection it needs (its node's, on a cluster) is down:
 *                              {@code REJECT_COMMANDS} fails it at once (a send to a dead master's slot fails
 *                              visibly instead of waiting for a timeout); {@code ACCEPT_COMMANDS} queues it until
 *                              the connection is back or {@code commandTimeout} has passed
 * @param topologyRefreshPeriod cluster: how often the topology is read again, besides the refreshes that redirects,
 *                              reconnect attempts and uncovered slots trigger
 * @param health                how a connection that died without a reset is found (keep-alive, TCP user timeout,
 *                              RMQ's own silence check)
 */
public record RedisClientSettings(Duration connectTimeout, Duration commandTimeout, Duration reconnectDelayMax,
        DisconnectedBehavior disconnectedBehavior, Duration topologyRefreshPeriod, ConnectionHealth health) {

    public static final RedisClientSettings DEFAULT = new RedisClientSettings(Duration.ofSeconds(5),
            Duration.ofSeconds(10), Duration.ofSeconds(1), DisconnectedBehavior.REJECT_COMMANDS, Duration.ofSeconds(5));

    /**
     * How RMQ's client finds a connection that is dead without having been closed or reset (a peer or a relay gone
     * silent: a failover behind a load balancer, a dropped NAT entry, a security-group change). With Lettuce's
     * defaults such a connection is found only by the kernel's TCP retransmission timeout (up to ~15 minutes) while
     * its commands time out one by one.
     *
     * @param keepAliveIdle     TCP keep-alive: idle time before the first probe ({@code 0}: keep-alive off); finds a
     *                          dead peer of an idle connection (a pub/sub one) within idle + interval × count.
     *                          Applied on the NIO transport too (JDK 11+ on Linux and macOS)
     * @param keepAliveInterval TCP keep-alive: time between probes
     * @param keepAliveCount    TCP keep-alive: unanswered probes before the kernel drops the connection
     * @param tcpUserTimeout    TCP_USER_TIMEOUT: longest that sent data may stay unacknowledged before the kernel
     *                          drops the connection ({@code 0}: the kernel's default); only with a native transport
     *                          (netty-transport-native-epoll or io_uring on the class path), Lettuce warns otherwise
     * @param silenceTimeout    RMQ's own check: a connection that owes replies and has received nothing for this long
     *                          is closed so that it is replaced ({@code 0}: off). Works whatever the transport, and
     *                          also when a relay in the middle still acknowledges the bytes (which no TCP option
     *                          sees); a connection is closed at most a tenth (or a second) after the bound
     */
    public record ConnectionHealth(Duration keepAliveIdle, Duration keepAliveInterval, int keepAliveCount,
            Duration tcpUserTimeout, Duration silenceTimeout) {

        public static final ConnectionHealth DEFAULT = new ConnectionHealth(Duration.ofSeconds(15),
                Duration.ofSeconds(5), 3, Duration.ZERO, Duration.ofSeconds(10));

        public ConnectionHealth {
            notNegative("keepAliveIdle", keepAliveIdle);
            positive("keepAliveInterval", keepAliveInterval);
            if (keepAliveCount < 1) {
                throw new RmqInvalidArgumentException("keepAliveCount", keepAliveCount, "must be at least 1");
            }
            notNegative("tcpUserTimeout", tcpUserTimeout);
            notNegative("silenceTimeout", silenceTimeout);
        }

        // its own checks: calling the outer class's would initialise it, whose DEFAULT needs this class's DEFAULT
        private static void positive(String name, Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new RmqInvalidArgumentException(name, value, "must be positive");
            }
        }

        private static void notNegative(String name, Duration value) {
            if (value == null || value.isNegative()) {
                throw new RmqInvalidArgumentException(name, value, "must be 0 or positive");
            }
        }

        public ConnectionHealth withSilenceTimeout(Duration timeout) {
            return new ConnectionHealth(keepAliveIdle, keepAliveInterval, keepAliveCount, tcpUserTimeout, timeout);
        }

        SocketOptions.Builder apply(SocketOptions.Builder socket) {
            if (!keepAliveIdle.isZero()) {
                socket.keepAlive(SocketOptions.KeepAliveOptions.builder().enable().idle(keepAliveIdle)
                        .interval(keepAliveInterval).count(keepAliveCount).build());
            }
            if (!tcpUserTimeout.isZero()) {
                socket.tcpUserTimeout(SocketOptions.TcpUserTimeoutOptions.builder().enable()
                        .tcpUserTimeout(tcpUserTimeout).build());
            }
            return socket;
        }
    }

    /** Settings with the {@link ConnectionHealth#DEFAULT default connection health}. */
    public RedisClientSettings(Duration connectTimeout, Duration commandTimeout, Duration reconnectDelayMax,
            DisconnectedBehavior disconnectedBehavior, Duration topologyRefreshPeriod) {
        this(connectTimeout, commandTimeout, reconnectDelayMax, disconnectedBehavior, topologyRefreshPeriod,
                ConnectionHealth.DEFAULT);
    }

    /**
     * Least time between two adaptive topology refreshes. A master that died triggers one at its first reconnect
     * attempts, usually before its replica is promoted; Lettuce's default of 30 s until the next one kept the dead
     * master's slots unreachable for that long. One a second follows a promotion within about a second.
     */
    static final Duration ADAPTIVE_REFRESH_EVERY = Duration.ofSeconds(1);
    /** Reconnect attempts to one node after which an adaptive topology refresh runs. */
    static final int RECONNECTS_BEFORE_REFRESH = 2;

    public RedisClientSettings {
        positive("connectTimeout", connectTimeout);
        positive("commandTimeout", commandTimeout);
        positive("reconnectDelayMax", reconnectDelayMax);
        positive("topologyRefreshPeriod", topologyRefreshPeriod);
        if (disconnectedBehavior == null) {
            throw new RmqInvalidArgumentException("disconnectedBehavior", null, "must not be null");
        }
        if (health == null) {
            throw new RmqInvalidArgumentException("health", null, "must not be null");
        }
    }

    private static void positive(String name, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new RmqInvalidArgumentException(name, value, "must be positive");
        }
    }

    public RedisClientSettings withReconnectDelayMax(Duration max) {
        return new RedisClientSettings(connectTimeout, commandTimeout, max, disconnectedBehavior, topologyRefreshPeriod,
                health);
    }

    public RedisClientSettings withDisconnectedBehavior(DisconnectedBehavior behavior) {
        return new RedisClientSettings(connectTimeout, commandTimeout, reconnectDelayMax, behavior, topologyRefreshPeriod,
                health);
    }

    public RedisClientSettings withHealth(ConnectionHealth connectionHealth) {
        return new RedisClientSettings(connectTimeout, commandTimeout, reconnectDelayMax, disconnectedBehavior,
                topologyRefreshPeriod, connectionHealth);
    }

    /** Reconnect delays: exponential from 50 ms up to {@code reconnectDelayMax}. */
    public Delay reconnectDelay() {
        return RedisGateway.reconnectDelay(reconnectDelayMax);
    }

    /** Options of a standalone or Sentinel client; {@code ssl} as the connection details give it, or null. */
    public ClientOptions clientOptions(@Nullable SslOptions ssl) {
        ClientOptions.Builder builder = ClientOptions.builder();
        common(builder, ssl);
        return builder.build();
    }

    /**
     * Options of a cluster client: those of {@link #clientOptions}, plus a topology refresh that follows a failover
     * within about a second of the promotion, and a node filter that drops a node that left the topology (flagged
     * failed or without an address, serving no slot), so that its connection is closed and it is no longer dialled
     * (Lettuce would otherwise try to reconnect to a dead master for as long as the application runs).
     */
    public ClusterClientOptions clusterClientOptions(@Nullable SslOptions ssl) {
        ClusterClientOptions.Builder builder = ClusterClientOptions.builder();
        common(builder, ssl);
        builder.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                .enablePeriodicRefresh(topologyRefreshPeriod)
                .enableAllAdaptiveRefreshTriggers()
                .refreshTriggersReconnectAttempts(RECONNECTS_BEFORE_REFRESH)
                .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_EVERY)
                .closeStaleConnections(true)
                .dynamicRefreshSources(true)
                .build());
        builder.nodeFilter(LIVE_NODES);
        return builder.build();
    }

    private void common(ClientOptions.Builder builder, @Nullable SslOptions ssl) {
        builder.autoReconnect(true)
                .disconnectedBehavior(disconnectedBehavior)
                .socketOptions(health.apply(SocketOptions.builder().connectTimeout(connectTimeout)).build())
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout));
        if (ssl != null) {
            builder.sslOptions(ssl);
        }
    }

    /** A copy of {@code uri} with this client's command timeout (Lettuce's RedisURI is mutable: never change the caller's). */
    public RedisURI apply(RedisURI uri) {
        RedisURI.Builder copy = RedisURI.builder(uri).withTimeout(commandTimeout);
        // the copying builder leaves Sentinel out
        if (uri.getSentinelMasterId() != null) {
            copy.withSentinelMasterId(uri.getSentinelMasterId());
        }
        for (RedisURI sentinel : uri.getSentinels()) {
            copy.withSentinel(RedisURI.builder(sentinel).withTimeout(commandTimeout).build());
        }
        return copy.build();
    }

    /**
     * Client resources for RMQ's client that share everything of {@code shared} (event loops, computation threads,
     * timer, event bus, tracing, latency recorder, DNS) but reconnect with RMQ's {@link #reconnectDelay()} and add
     * RMQ's check for silent connections ({@link ConnectionHealth#silenceTimeout()}) to what the shared Netty
     * customizer does: both belong to the resources in Lettuce, not to a client. Shutting them down shuts nothing
     * of {@code shared} down.
     */
    public ClientResources resourcesSharing(ClientResources shared) {
        return DefaultClientResources.builder()
                .eventLoopGroupProvider(shared.eventLoopGroupProvider())
                .eventExecutorGroup(shared.eventExecutorGroup())
                .timer(shared.timer())
                .eventBus(shared.eventBus())
                .commandLatencyRecorder(shared.commandLatencyRecorder())
                // the shared resources publish their recorder's metrics already
                .commandLatencyPublisherOptions(DefaultEventPublisherOptions.disabled())
                .tracing(shared.tracing())
                .nettyCustomizer(SilentConnectionGuard.customizer(shared.nettyCustomizer(), health.silenceTimeout()))
                .addressResolverGroup(shared.addressResolverGroup())
                .reconnectDelay(reconnectDelay())
                .socketAddressResolver(shared.socketAddressResolver())
                .build();
    }

    /** Resources of RMQ's own, for a client that has none to share: shut down with the client. */
    public ClientResources ownResources() {
        return DefaultClientResources.builder().reconnectDelay(reconnectDelay())
                .nettyCustomizer(SilentConnectionGuard.customizer(new NettyCustomizer() {
                }, health.silenceTimeout()))
                .build();
    }

    /**
     * Keeps a node in the client's view of the cluster unless it left the topology: a node that serves slots is kept
     * whatever its state (commands for those slots need it, and reconnecting to it is right); one that serves none is
     * dropped when the cluster flags it failed (or suspected), without an address or in handshake, or its link is
     * down. A master that failed over is such a node once its replica took its slots; when it comes back it rejoins
     * as a replica and is seen again.
     */
    static final Predicate<RedisClusterNode> LIVE_NODES = RedisClientSettings::isLive;

    static boolean isLive(RedisClusterNode node) {
        if (!node.getSlots().isEmpty()) {
            return true;
        }
        return !node.is(NodeFlag.FAIL) && !node.is(NodeFlag.EVENTUAL_FAIL) && !node.is(NodeFlag.NOADDR)
                && !node.is(NodeFlag.HANDSHAKE) && (node.is(NodeFlag.MYSELF) || node.isConnected());
    }
}
