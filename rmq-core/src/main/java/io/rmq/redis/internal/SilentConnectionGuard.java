package io.rmq.redis.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.protocol.CommandHandler;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a Redis connection that owes replies and has received nothing for {@code silence}, so that Lettuce replaces
 * it (its watchdog reconnects after any close it did not ask for). Without this, a link that stays dead without a
 * reset (a failover behind a load balancer, a dropped NAT entry, a blackholing relay) is only found by the kernel's
 * TCP retransmission timeout, up to ~15 minutes, while every command on it times out one by one; TCP keep-alive
 * does not help while data is unacknowledged, TCP_USER_TIMEOUT needs a native transport, and neither helps when a
 * relay in the middle still acknowledges the bytes.
 * <p>
 * One guard per channel, first in its pipeline (it sees the encoded bytes). All its state is touched only on the
 * channel's event loop (reads, writes and the periodic check all run there), so it needs no locks. It counts as
 * "owing replies" Lettuce's command stack being non-empty; commands that timed out stay on that stack until their
 * reply comes, so a connection whose commands all timed out is still seen as waiting.
 */
public final class SilentConnectionGuard extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(SilentConnectionGuard.class);

    private final long silenceNanos;
    private final long checkEveryNanos;
    /** Last time a byte was read, or the channel became active. */
    private long lastReadNanos;
    /** First write since the command stack was last seen empty; 0 when not waiting. */
    private long waitingSinceNanos;
    private ScheduledFuture<?> check;
    private CommandHandler commands;

    SilentConnectionGuard(Duration silence) {
        this.silenceNanos = silence.toNanos();
        // often enough that the close comes at most a tenth (or a second) after the silence bound
        this.checkEveryNanos = Math.min(TimeUnit.SECONDS.toNanos(1), Math.max(TimeUnit.MILLISECONDS.toNanos(10),
                silenceNanos / 10));
    }

    /**
     * A customizer that puts a guard in every channel of a client, after what {@code delegate} (the shared
     * resources' own customizer) does; {@code silence} zero or negative: no guard.
     */
    public static NettyCustomizer customizer(NettyCustomizer delegate, Duration silence) {
        return new NettyCustomizer() {
            @Override
            public void afterBootstrapInitialized(Bootstrap bootstrap) {
                delegate.afterBootstrapInitialized(bootstrap);
            }

            @Override
            public void afterChannelInitialized(Channel channel) {
                delegate.afterChannelInitialized(channel);
                if (!silence.isZero() && !silence.isNegative()) {
                    channel.pipeline().addFirst("rmqSilentConnectionGuard", new SilentConnectionGuard(silence));
                }
            }
        };
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            start(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start(ctx);
        super.channelActive(ctx);
    }

    private void start(ChannelHandlerContext ctx) {
        if (check != null) {
            return;
        }
        lastReadNanos = System.nanoTime();
        check = ctx.executor().scheduleAtFixedRate(() -> check(ctx), checkEveryNanos, checkEveryNanos,
                TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        lastReadNanos = System.nanoTime();
        super.channelRead(ctx, msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (waitingSinceNanos == 0) {
            waitingSinceNanos = System.nanoTime();
        }
        super.write(ctx, msg, promise);
    }

    private void check(ChannelHandlerContext ctx) {
        if (commands == null) {
            // Lettuce's handler is added with ours; looked up lazily in case it is added after
            commands = ctx.pipeline().get(CommandHandler.class);
        }
        if (commands == null || commands.getStack().isEmpty()) {
            waitingSinceNanos = 0;
            return;
        }
        if (waitingSinceNanos == 0) {
            return;
        }
        long now = System.nanoTime();
        long silentNanos = now - Math.max(waitingSinceNanos, lastReadNanos);
        if (silentNanos >= silenceNanos) {
            log.warn("Redis connection {} owes {} replies and has received nothing for {} ms: closing it so that it is"
                    + " replaced (a link that went silent without a reset)", ctx.channel().remoteAddress(),
                    commands.getStack().size(), TimeUnit.NANOSECONDS.toMillis(silentNanos));
            stop();
            ctx.channel().close();
        }
    }

    private void stop() {
        if (check != null) {
            check.cancel(false);
            check = null;
        }
    }
}
