package io.rmq.faults;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisURI;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.DnsResolvers;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.coordination.zookeeper.ZooKeeperSlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * A consumer process of the fault suite: one RMQ listener container on one topic, as a service would run it, that
 * records every message its handler was given in a file of its own ({@code body,handledAtMillis} per line) before
 * the handler returns (so before the ack). Written with plain {@code write} calls: the lines survive a kill -9 of
 * this process. It prints {@code READY} once consuming and stops gracefully on a {@code STOP} line on stdin.
 * <p>
 * Arguments ({@code --name value}): {@code redis} (host:port) or {@code cluster} (host:port,...) with optionally
 * {@code via} (node=proxy,...: this JVM reaches those nodes through those addresses), {@code prefix},
 * {@code topic}, {@code slots}, {@code record} (file), {@code concurrency}, {@code lease-ms}, {@code batch},
 * {@code max-idle-ms}, {@code command-timeout-ms}, {@code handle-ms} (simulated work per message), {@code type}
 * (RANGE_MERGE), {@code mode} (CONCURRENT or ORDERLY), {@code ownership-ms} (ORDERLY), {@code zookeeper} (ORDERLY:
 * coordinate through ZooKeeper at this connect string instead of Redis) and {@code session-ms} (its session
 * timeout). ORDERLY consumers also write
 * {@code slot,startMillis,endMillis,body} per handled message to {@code <record>.intervals}, for the overlap and order
 * checks. With {@code deliveries true}, every consumer also writes {@code startMillis,endMillis,attempt,body} per
 * handled message to {@code <record>.deliveries}: when each delivery began, for the cancel scenarios' checks of what
 * was handed out after a cancel returned. A message sent with an id is recorded by its id (the payload changes with
 * every send that merges into it); with {@code versions true}, every consumer also writes
 * {@code id,v,payload,attempt} per handled message to {@code <record>.versions} ({@code v}: the message's header of
 * that name), for the checks that the newest payload of each id arrived, with its own headers. With
 * {@code instances-ms}, the engine takes part in the instance registry (application {@code fault-consumer}) with that
 * heartbeat: it lists itself and honours cluster-wide pauses. With {@code held true}, every consumer also writes to
 * {@code <record>.held} a line {@code S,startMillis,id} when a handler starts on a delivery and {@code E,endMillis,id,
 * outcome} when Redis answered its settlement (RMQ's instrumentation reports both): the deliveries that are in its
 * hands at any moment, from which the nemesis ({@code NemesisTest}) bounds what a fault may make it handle again.
 * With {@code contexts true}, trace context propagation is on and every consumer also writes
 * {@code id,attempt,traceparent} per handled message to {@code <record>.contexts} ({@code -}: the delivery came with
 * none), for the checks that each delivery carries its own send's context or none.
 * With {@code reply true}, the handler answers each request ({@code RmqReplies}) with {@code re:<body>} before it
 * returns.
 * <p>
 * Every consumer talks to Redis as an application does: through RMQ's own client ({@link RmqRedisClient}) with
 * {@link RedisClientSettings#DEFAULT RMQ's default settings} (connect timeout 5 s, command timeout 10 s, reconnect delay
 * up to 1 s, commands rejected at once while their connection is down, RMQ's topology refresh on a cluster). With
 * {@code defaults true}, the listener too runs with the settings a user of the Spring Boot starter gets by default
 * (batch 64, lease 30 s, max idle 30 s, command timeout 10 s, shutdown timeout 30 s); only {@code concurrency} is taken
 * from the arguments.
 */
public final class ConsumerMain {

    private ConsumerMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        boolean defaults = Boolean.parseBoolean(options.getOrDefault("defaults", "false"));
        RmqRedisClient client = client(options);
        String topic = options.get("topic");
        long handleMillis = Long.parseLong(options.getOrDefault("handle-ms", "0"));
        OutputStream record = new FileOutputStream(options.get("record"), true);
        RmqOptions rmqOptions = RmqOptions.DEFAULT.withKeyPrefix(options.get("prefix"));
        if (Boolean.parseBoolean(options.getOrDefault("held", "false"))) {
            rmqOptions = rmqOptions.withInstrumentation(new HeldRecorder(
                    new FileOutputStream(options.get("record") + ".held", true)));
        }
        boolean recordContexts = Boolean.parseBoolean(options.getOrDefault("contexts", "false"));
        if (recordContexts) {
            rmqOptions = rmqOptions.withPropagateContext(true);
        }
        Rmq rmq = Rmq.create(client.client(), rmqOptions);
        rmq.defineTopic(topic, TopicType.valueOf(options.getOrDefault("type", "RANGE_MERGE")),
                Integer.parseInt(options.getOrDefault("slots", "16")));
        ConsumeMode mode = ConsumeMode.valueOf(options.getOrDefault("mode", "CONCURRENT"));
        OutputStream intervals = new FileOutputStream(options.get("record") + ".intervals", true);
        boolean recordDeliveries = Boolean.parseBoolean(options.getOrDefault("deliveries", "false"));
        OutputStream deliveries = new FileOutputStream(options.get("record") + ".deliveries", true);
        boolean recordVersions = Boolean.parseBoolean(options.getOrDefault("versions", "false"));
        boolean replying = Boolean.parseBoolean(options.getOrDefault("reply", "false"));
        OutputStream versions = new FileOutputStream(options.get("record") + ".versions", true);
        OutputStream contexts = new FileOutputStream(options.get("record") + ".contexts", true);
        ConsumerSettings settings = defaults ? ConsumerSettings.DEFAULT
                : new ConsumerSettings(Integer.parseInt(options.getOrDefault("batch", "16")),
                Duration.ofMillis(Long.parseLong(options.getOrDefault("lease-ms", "2000"))),
                new RetryPolicy(1000, BackoffPolicy.fixed(Duration.ofMillis(100))));
        if (options.containsKey("instances-ms")) {
            // before the container is made, so its busy handlers are reported and the known pauses adopted
            rmq.instances().start(new io.rmq.instances.InstanceSettings("fault-consumer",
                    Duration.ofMillis(Long.parseLong(options.get("instances-ms")))));
        }
        CuratorFramework curator = null;
        SlotCoordinator coordinator = rmq.slotCoordinator();
        if (options.containsKey("zookeeper")) {
            curator = CuratorFrameworkFactory.newClient(options.get("zookeeper"),
                    Integer.parseInt(options.getOrDefault("session-ms", "5000")), 5000,
                    new ExponentialBackoffRetry(200, 5, 2000));
            curator.start();
            coordinator = new ZooKeeperSlotCoordinator(curator, "/rmq/" + options.get("prefix"));
        }
        ListenerContainer container = rmq.container(topic, settings, String.class, (String body, Delivery delivery) -> {
                    long start = System.currentTimeMillis();
                    if (handleMillis > 0) {
                        Thread.sleep(handleMillis);
                    }
                    long end = System.currentTimeMillis();
                    String id = delivery.id() != null ? delivery.id() : body;
                    if (recordVersions) {
                        // before the main record: a line there means this one was written too
                        byte[] version = (id + "," + delivery.headers().get("v") + "," + body + "," + delivery.attempt() + "\n")
                                .getBytes(StandardCharsets.UTF_8);
                        synchronized (versions) {
                            versions.write(version);
                        }
                    }
                    if (recordContexts) {
                        // before the main record, as the versions: the trace context the delivery came with
                        String traceparent = delivery.context().get("traceparent");
                        byte[] context = (id + "," + delivery.attempt() + ","
                                + (traceparent == null ? "-" : traceparent) + "\n").getBytes(StandardCharsets.UTF_8);
                        synchronized (contexts) {
                            contexts.write(context);
                        }
                    }
                    byte[] line = (id + "," + end + "\n").getBytes(StandardCharsets.UTF_8);
                    synchronized (record) {
                        record.write(line);
                    }
                    if (mode == ConsumeMode.ORDERLY) {
                        byte[] interval = (delivery.slot() + "," + start + "," + end + "," + body + "\n")
                                .getBytes(StandardCharsets.UTF_8);
                        synchronized (intervals) {
                            intervals.write(interval);
                        }
                    }
                    if (recordDeliveries) {
                        byte[] handled = (start + "," + end + "," + delivery.attempt() + "," + body + "\n")
                                .getBytes(StandardCharsets.UTF_8);
                        synchronized (deliveries) {
                            deliveries.write(handled);
                        }
                    }
                    if (replying) {
                        // a request's reply goes back to its requester before the ack (as RMQ's Spring listeners do)
                        rmq.replies().reply(delivery.headers(), "re:" + body).join();
                    }
                }, defaults ? ContainerOptions.of("fault-consumer", Integer.parseInt(options.getOrDefault("concurrency", "1")))
                        : new ContainerOptions("fault-consumer", Integer.parseInt(options.getOrDefault("concurrency", "4")),
                        Duration.ofMillis(Long.parseLong(options.getOrDefault("max-idle-ms", "2000"))),
                        Duration.ofSeconds(5), null,
                        Duration.ofMillis(Long.parseLong(options.getOrDefault("command-timeout-ms", "2000"))), mode,
                        null, Duration.ofMillis(Long.parseLong(options.getOrDefault("ownership-ms", "5000")))),
                coordinator);
        container.start();
        System.out.println("READY");
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null && !line.equals("STOP")) {
            // wait for STOP (or the parent's end)
        }
        container.stop();
        if (curator != null) {
            curator.close();
        }
        rmq.close();
        client.close();
        record.close();
        intervals.close();
        deliveries.close();
        versions.close();
        contexts.close();
        System.out.println("STOPPED");
        System.out.flush();
    }

    /**
     * Writes {@code S,startMillis,id} when a handler starts on a delivery and {@code E,endMillis,id,outcome} when Redis
     * answered its settlement (a settlement that failed reports nothing: the delivery stays in hand until its lease
     * runs out and it is handled again). Plain {@code write} calls, so the lines survive a kill -9. Called on handler
     * threads and Lettuce threads: one lock around the file.
     */
    private static final class HeldRecorder implements io.rmq.observe.RmqInstrumentation {

        private final OutputStream out;

        HeldRecorder(OutputStream out) {
            this.out = out;
        }

        @Override
        public boolean timed() {
            return false;
        }

        @Override
        public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
            String id = delivery.id() != null ? delivery.id() : delivery.bodyAsString();
            write("S," + System.currentTimeMillis() + "," + id + "\n");
            return new HandleScope() {
                @Override
                public void settled(Outcome outcome) {
                    write("E," + System.currentTimeMillis() + "," + id + "," + outcome + "\n");
                }
            };
        }

        private void write(String line) {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            synchronized (out) {
                try {
                    out.write(bytes);
                }
                catch (IOException ex) {
                    throw new java.io.UncheckedIOException(ex);
                }
            }
        }
    }

    /** RMQ's own client with its defaults and resources of its own, as an application without Spring would build it. */
    private static RmqRedisClient client(Map<String, String> options) {
        if (options.containsKey("cluster")) {
            List<RedisURI> seeds = new ArrayList<>();
            for (String node : options.get("cluster").split(",")) {
                seeds.add(uri(node));
            }
            return RmqRedisClient.cluster(seeds, null, via(options.get("via")), RedisClientSettings.DEFAULT);
        }
        return RmqRedisClient.standalone(uri(options.get("redis")), null, null, RedisClientSettings.DEFAULT);
    }

    /**
     * With {@code via a:1=b:2,c:3=d:4}, client resources whose socket address resolver connects to {@code b:2}
     * whenever the client means node {@code a:1} (Lettuce's {@link MappingSocketAddressResolver}): the cluster's
     * topology and redirections still name the nodes themselves, only this JVM's connections go through the proxies.
     * Null (RMQ's own resources) without the option. The resources live as long as the JVM.
     */
    private static ClientResources via(String via) {
        if (via == null) {
            return null;
        }
        Map<String, HostAndPort> mapping = new HashMap<>();
        for (String pair : via.split(",")) {
            String[] sides = pair.split("=");
            mapping.put(sides[0], HostAndPort.parse(sides[1]));
        }
        return DefaultClientResources.builder().socketAddressResolver(MappingSocketAddressResolver.create(
                DnsResolvers.UNRESOLVED, node -> mapping.getOrDefault(node.getHostText() + ":" + node.getPort(), node)))
                .build();
    }

    private static RedisURI uri(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return RedisURI.create(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    private static Map<String, String> parse(String[] args) throws IOException {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IOException("expected --name value pairs, got " + args[i]);
            }
            options.put(args[i].substring(2), args[i + 1]);
        }
        return options;
    }
}
