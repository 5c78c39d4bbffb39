package io.rmq.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small TCP proxy on a free loopback port in front of one server (Redis, ZooKeeper), for fault injection: it
 * forwards bytes both ways and can
 * <ul>
 * <li>delay every chunk: {@link #latency(int)} (random 0..max) or {@link #latency(Duration, Duration)} (base ±
 * jitter), each direction keeping its order (a chunk is never sent before the one read before it);</li>
 * <li>stall: hold every byte for a while, connections open, then deliver it (a silent link that comes back);</li>
 * <li>blackhole a direction or both: swallow every byte, never answer, never close or reset. A connection that was
 * blackholed stays dead for good, even after {@link #heal()}, as behind a dead NAT entry or a failed-over load
 * balancer; connections made while the blackhole is on are dead too; only connections made after the heal work;</li>
 * <li>reset: close every connection at once ({@link #resetAll()}); or inject stalls and resets at random itself.</li>
 * </ul>
 * Each direction of each connection has a reader thread (reads a chunk, stamps when it is due, queues it; swallows it
 * when the direction is dead) and a writer thread (waits until the chunk is due and no stall holds it, writes it), so
 * latency does not add up over a pipeline, and a stalled, slow or dead direction only affects itself. Nothing here
 * knows Redis: clients simply connect to {@link #port()} instead of the server's port.
 */
public final class TcpProxy implements AutoCloseable {

    /** Which way of a connection a blackhole swallows. */
    public enum Direction {
        /** Client to server: requests vanish (the server never sees them). */
        UPSTREAM,
        /** Server to client: replies vanish. */
        DOWNSTREAM,
        /** Both ways. */
        BOTH;

        boolean up() {
            return this != DOWNSTREAM;
        }

        boolean down() {
            return this != UPSTREAM;
        }
    }

    private static final int CHUNK = 16 * 1024;
    /** Chunks queued per direction: a stall or latency holds at most this many before the reader stops reading. */
    private static final int QUEUED_CHUNKS = 256;
    private static final byte[] END = new byte[0];

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean closed;
    private volatile int maxLatencyMillis;
    private volatile long baseLatencyMillis;
    private volatile long jitterMillis;
    /** The blackhole now on, for connections made while it is: null when none. */
    private volatile Direction blackhole;
    /** Local ms until which every byte is held; 0 when not stalled. */
    private final AtomicLong stalledUntil = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong stalls = new AtomicLong();
    private final AtomicLong blackholes = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    private volatile Thread chaos;

    public TcpProxy(String host, int port) throws IOException {
        this.target = new InetSocketAddress(host, port);
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.acceptor = new Thread(this::accept, "tcp-proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Every forwarded chunk waits a random 0..{@code millis} ms (0: none); ends a {@link #latency(Duration, Duration)}. */
    public TcpProxy latency(int millis) {
        this.baseLatencyMillis = 0;
        this.jitterMillis = 0;
        this.maxLatencyMillis = millis;
        return this;
    }

    /**
     * Every forwarded chunk is delivered {@code base} ± a uniformly random {@code jitter} after it was read (e.g.
     * 200 ms ± 50 ms), in order per direction; ends a {@link #latency(int)}.
     */
    public TcpProxy latency(Duration base, Duration jitter) {
        if (jitter.compareTo(base) > 0 || jitter.isNegative()) {
            throw new IllegalArgumentException("jitter " + jitter + " must be between 0 and the base latency " + base);
        }
        this.maxLatencyMillis = 0;
        this.jitterMillis = jitter.toMillis();
        this.baseLatencyMillis = base.toMillis();
        return this;
    }

    /** Holds every byte in both directions for {@code millis} ms; connections stay open. */
    public void stall(long millis) {
        stalledUntil.set(System.currentTimeMillis() + millis);
        stalls.incrementAndGet();
    }

    /**
     * Blackholes {@code direction} of every open connection for good, and of every connection made until
     * {@link #heal()}: its bytes are read and dropped, nothing is answered, closed or reset.
     */
    public void blackhole(Direction direction) {
        blackholes.incrementAndGet();
        blackhole = direction;
        for (Link link : links) {
            link.kill(direction);
        }
    }

    /**
     * Ends a blackhole (connections made from now on work; those blackholed stay dead), latency, a stall and
     * random faults.
     */
    public void heal() {
        blackhole = null;
        calm();
    }

    /** Closes every proxied connection at once (as a network reset would); new connections are accepted. */
    public void resetAll() {
        resets.incrementAndGet();
        for (Link link : links) {
            link.close();
        }
        links.clear();
    }

    public long resets() {
        return resets.get();
    }

    public long stalls() {
        return stalls.get();
    }

    /** How many times {@link #blackhole} was called. */
    public long blackholes() {
        return blackholes.get();
    }

    /** Connections accepted so far (a client that replaced a dead connection made a new one). */
    public long accepted() {
        return accepted.get();
    }

    /** Connections of which at least one direction was blackholed (they are closed only by a reset or close). */
    public long deadConnections() {
        return links.stream().filter(link -> link.deadUp || link.deadDown).count();
    }

    /**
     * Injects faults at random until {@link #close()} or {@link #calm()}: every {@code everyMillis} on average, a
     * reset (with probability {@code resetShare}) or else a stall of up to {@code maxStallMillis}.
     */
    public void chaos(long seed, long everyMillis, double resetShare, long maxStallMillis) {
        Random random = new Random(seed);
        Thread thread = new Thread(() -> {
            while (!closed && chaos == Thread.currentThread()) {
                try {
                    Thread.sleep((long) (everyMillis * (0.5 + random.nextDouble())));
                }
                catch (InterruptedException ex) {
                    return;
                }
                if (closed || chaos != Thread.currentThread()) {
                    return;
                }
                if (random.nextDouble() < resetShare) {
                    resetAll();
                }
                else {
                    stall(1 + (long) (random.nextDouble() * maxStallMillis));
                }
            }
        }, "tcp-proxy-chaos-" + port());
        thread.setDaemon(true);
        chaos = thread;
        thread.start();
    }

    /** Stops random faults and latency; ends a stall (a blackhole stays: see {@link #heal()}). */
    public void calm() {
        Thread thread = chaos;
        chaos = null;
        if (thread != null) {
            thread.interrupt();
        }
        maxLatencyMillis = 0;
        baseLatencyMillis = 0;
        jitterMillis = 0;
        stalledUntil.set(0);
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                try {
                    upstream.connect(target, 5000);
                }
                catch (IOException ex) {
                    closeQuietly(client);
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                accepted.incrementAndGet();
                Link link = new Link(client, upstream);
                Direction now = blackhole;
                if (now != null) {
                    link.kill(now);
                }
                links.add(link);
                link.start();
            }
            catch (IOException ex) {
                if (!closed) {
                    sleep(10);
                }
            }
        }
    }

    /** Milliseconds the next chunk waits, from the latency now set. */
    private long delayMillis() {
        int max = maxLatencyMillis;
        if (max > 0) {
            return ThreadLocalRandom.current().nextInt(max + 1);
        }
        long base = baseLatencyMillis;
        long jitter = jitterMillis;
        if (base > 0) {
            return base + (jitter > 0 ? ThreadLocalRandom.current().nextLong(-jitter, jitter + 1) : 0);
        }
        return 0;
    }

    /** One proxied connection: the client's socket, the server's, and whether each direction is dead. */
    private final class Link {

        final Socket client;
        final Socket upstream;
        volatile boolean deadUp;
        volatile boolean deadDown;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void kill(Direction direction) {
            if (direction.up()) {
                deadUp = true;
            }
            if (direction.down()) {
                deadDown = true;
            }
        }

        boolean dead(boolean up) {
            return up ? deadUp : deadDown;
        }

        void start() {
            pump(client, upstream, true);
            pump(upstream, client, false);
        }

        void close() {
            closeQuietly(client);
            closeQuietly(upstream);
        }

        private void pump(Socket from, Socket to, boolean up) {
            String direction = up ? "up" : "down";
            BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
            Thread reader = new Thread(() -> read(from, queue, up), "tcp-proxy-" + direction + "-read-" + port());
            Thread writer = new Thread(() -> write(to, queue, up), "tcp-proxy-" + direction + "-write-" + port());
            reader.setDaemon(true);
            writer.setDaemon(true);
            reader.start();
            writer.start();
        }

        private void read(Socket from, BlockingQueue<Chunk> queue, boolean up) {
            byte[] buffer = new byte[CHUNK];
            try {
                InputStream in = from.getInputStream();
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    if (dead(up)) {
                        continue; // swallowed
                    }
                    long due = System.currentTimeMillis() + delayMillis();
                    if (!put(queue, new Chunk(Arrays.copyOf(buffer, read), due), from)) {
                        return;
                    }
                }
            }
            catch (IOException ex) {
                // closed by a reset or by the other side
            }
            if (dead(up)) {
                // a dead direction passes no end of stream: the other side never learns (the link stays listed,
                // so that resetAll and close still close its other socket)
                closeQuietly(from);
                return;
            }
            put(queue, new Chunk(END, 0), from);
        }

        /** Queues {@code chunk} unless the proxy or {@code from} is closed first (the writer may be gone). */
        private boolean put(BlockingQueue<Chunk> queue, Chunk chunk, Socket from) {
            try {
                while (!closed && !from.isClosed()) {
                    if (queue.offer(chunk, 100, TimeUnit.MILLISECONDS)) {
                        return true;
                    }
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return false;
        }

        private void write(Socket to, BlockingQueue<Chunk> queue, boolean up) {
            long lastDue = 0;
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk chunk = queue.poll(1, TimeUnit.SECONDS);
                    if (closed) {
                        break;
                    }
                    if (chunk == null) {
                        continue;
                    }
                    if (chunk.bytes == END) {
                        break;
                    }
                    // a chunk never overtakes the one before it, whatever their random delays
                    long due = Math.max(chunk.due, lastDue);
                    lastDue = due;
                    long wait;
                    while ((wait = due - System.currentTimeMillis()) > 0 && !closed) {
                        sleep(Math.min(50, wait));
                    }
                    long until;
                    while ((until = stalledUntil.get()) > System.currentTimeMillis() && !closed) {
                        sleep(Math.min(50, Math.max(1, until - System.currentTimeMillis())));
                    }
                    if (dead(up)) {
                        continue; // blackholed while queued
                    }
                    out.write(chunk.bytes);
                    out.flush();
                }
            }
            catch (IOException ex) {
                // closed by a reset or by the other side
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            if (!dead(up) && !dead(!up)) {
                links.remove(this);
                close();
            }
        }
    }

    private record Chunk(byte[] bytes, long due) {
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        }
        catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        calm();
        try {
            server.close();
        }
        catch (IOException ignored) {
            // closing anyway
        }
        resetAll();
    }
}
