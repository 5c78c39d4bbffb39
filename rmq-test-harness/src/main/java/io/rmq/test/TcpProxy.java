package io.rmq.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small TCP proxy on a free loopback port in front of one Redis server, for fault injection: it forwards bytes both
 * ways, optionally delaying each chunk by a random latency, and can stall (hold every byte, connections stay open),
 * reset (close every connection at once) or be told to inject stalls and resets at random itself.
 * <p>
 * Each direction of each connection has its own pump thread, so a stalled or slow direction only affects itself.
 * Nothing here knows Redis: clients simply connect to {@link #port()} instead of the server's port.
 */
public final class TcpProxy implements AutoCloseable {

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean closed;
    private volatile int maxLatencyMillis;
    /** Local ms until which every byte is held; 0 when not stalled. */
    private final AtomicLong stalledUntil = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong stalls = new AtomicLong();
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

    /** Every forwarded chunk waits a random 0..{@code millis} ms (0: none). */
    public TcpProxy latency(int millis) {
        this.maxLatencyMillis = millis;
        return this;
    }

    /** Holds every byte in both directions for {@code millis} ms; connections stay open. */
    public void stall(long millis) {
        stalledUntil.set(System.currentTimeMillis() + millis);
        stalls.incrementAndGet();
    }

    /** Closes every proxied connection at once (as a network reset would); new connections are accepted. */
    public void resetAll() {
        resets.incrementAndGet();
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    public long resets() {
        return resets.get();
    }

    public long stalls() {
        return stalls.get();
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

    /** Stops random faults and latency; ends a stall. */
    public void calm() {
        Thread thread = chaos;
        chaos = null;
        if (thread != null) {
            thread.interrupt();
        }
        maxLatencyMillis = 0;
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
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, "up");
                pump(upstream, client, "down");
            }
            catch (IOException ex) {
                if (!closed) {
                    sleep(10);
                }
            }
        }
    }

    private void pump(Socket from, Socket to, String direction) {
        Thread thread = new Thread(() -> {
            Random random = new Random();
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    int latency = maxLatencyMillis;
                    if (latency > 0) {
                        sleep(random.nextInt(latency + 1));
                    }
                    long until;
                    while ((until = stalledUntil.get()) > System.currentTimeMillis() && !closed) {
                        sleep(Math.min(50, Math.max(1, until - System.currentTimeMillis())));
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (IOException ex) {
                // closed by a reset or by the other side
            }
            finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "tcp-proxy-" + direction + "-" + port());
        thread.setDaemon(true);
        thread.start();
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
