package io.rmq.test;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Test Redis servers, started lazily once per JVM and shared by all tests in it.
 * <p>
 * Each of the standalone server and the cluster is acquired, separately, from the first route that works:
 * <ol>
 *   <li>the environment: {@code RMQ_TEST_REDIS_URL} (e.g. {@code redis://127.0.0.1:6379}) for the standalone server,
 *       {@code RMQ_TEST_REDIS_CLUSTER_NODES} ({@code host:port,host:port,...}) for the cluster; used as they are and
 *       never stopped;</li>
 *   <li>a {@code redis-server} on the PATH, started as child processes on free loopback ports;</li>
 *   <li>the {@code redis-server} binary bundled in the {@code com.github.codemonstur:embedded-redis} jar for this
 *       OS/architecture, extracted to a temporary file and started exactly like the previous route.</li>
 * </ol>
 * (Testcontainers is not used.) The cluster is three masters that this class forms itself with Lettuce (CLUSTER
 * ADDSLOTS / MEET). Servers this JVM started are stopped by {@link RedisServersExtension} at the end of the JUnit run,
 * and by a JVM shutdown hook otherwise. Each start logs one line to {@code System.err} naming the route and ports.
 */
public final class TestRedisServers {

    static final String ENV_STANDALONE_URL = "RMQ_TEST_REDIS_URL";
    static final String ENV_CLUSTER_NODES = "RMQ_TEST_REDIS_CLUSTER_NODES";

    private static final String LOG_PREFIX = "[rmq-test-redis] ";
    private static final int CLUSTER_MASTERS = 3;
    private static final int CLUSTER_SLOTS = 16384;
    private static final Duration CLUSTER_FORM_TIMEOUT = Duration.ofSeconds(60);

    // Lock order: STANDALONE_LOCK, CLUSTER_LOCK, SHARED_LOCK. The shutdown hook takes none.
    private static final Object STANDALONE_LOCK = new Object();
    private static final Object CLUSTER_LOCK = new Object();
    private static final Object SHARED_LOCK = new Object();

    /** Everything started and not yet stopped, for the lock-free shutdown hook. */
    private static final Queue<RedisServerProcess> LIVE_PROCESSES = new ConcurrentLinkedQueue<>();
    private static final Queue<Path> LIVE_TEMP_DIRS = new ConcurrentLinkedQueue<>();

    private static Deployment standalone;                       // STANDALONE_LOCK
    private static RedisClient standaloneAdminClient;           // STANDALONE_LOCK
    private static StatefulRedisConnection<String, String> standaloneAdmin;

    private static Deployment cluster;                          // CLUSTER_LOCK
    private static RedisClusterClient clusterAdminClient;       // CLUSTER_LOCK
    private static StatefulRedisClusterConnection<String, String> clusterAdmin;

    private static Path workRoot;                               // SHARED_LOCK
    private static Path bundledExecutable;                      // SHARED_LOCK
    private static ClientResources clientResources;             // SHARED_LOCK
    private static boolean shutdownHookRegistered;              // SHARED_LOCK

    private TestRedisServers() {
    }

    /** Where a deployment came from and what we must stop. */
    private record Deployment(String route, List<RedisEndpoint> endpoints, List<RedisServerProcess> processes,
                              String standaloneUrl) {
    }

    // ---------------------------------------------------------------------------------------------------- public API

    /** The standalone server, started on first use. */
    public static RedisEndpoint standalone() {
        return standaloneDeployment().endpoints().get(0);
    }

    /** The cluster's nodes (three masters for servers we start; whatever {@code RMQ_TEST_REDIS_CLUSTER_NODES} lists otherwise). */
    public static List<RedisEndpoint> clusterNodes() {
        return clusterDeployment().endpoints();
    }

    // --------------------------------------------------------------------------------------- used by RedisTopology

    static RedisClient newStandaloneClient() {
        return RedisClient.create(resources(), standaloneUri());
    }

    static RedisClusterClient newClusterClient() {
        return RedisClusterClient.create(resources(), clusterSeeds(clusterNodes()));
    }

    static List<RedisURI> standaloneUris() {
        return List.of(standaloneUri());
    }

    static List<RedisURI> clusterUris() {
        return clusterSeeds(clusterNodes());
    }

    static void flushStandalone() {
        synchronized (STANDALONE_LOCK) {
            standaloneDeployment();
            if (standaloneAdmin == null || !standaloneAdmin.isOpen()) {
                closeStandaloneAdmin();
                standaloneAdminClient = RedisClient.create(resources(), standaloneUri());
                standaloneAdmin = standaloneAdminClient.connect();
            }
            standaloneAdmin.sync().flushall();
        }
    }

    static void flushCluster() {
        synchronized (CLUSTER_LOCK) {
            List<RedisEndpoint> nodes = clusterNodes();
            if (clusterAdmin == null || !clusterAdmin.isOpen()) {
                closeClusterAdmin();
                clusterAdminClient = RedisClusterClient.create(resources(), clusterSeeds(nodes));
                clusterAdmin = clusterAdminClient.connect();
            }
            int masters = 0;
            for (RedisClusterNode node : clusterAdmin.getPartitions()) {
                if (node.getRole().isUpstream()) {
                    clusterAdmin.getConnection(node.getNodeId()).sync().flushall();
                    masters++;
                }
            }
            if (masters == 0) {
                throw new IllegalStateException("cluster " + nodes + " reports no master to flush");
            }
        }
    }

    /** username/password/database/ssl from {@code RMQ_TEST_REDIS_URL}, if it has them (never for our own servers). */
    static Map<String, String> standaloneCredentialProperties() {
        Map<String, String> props = new LinkedHashMap<>();
        RedisURI uri = standaloneUri();
        RedisCredentials credentials = uri.getCredentialsProvider() == null ? null
                : uri.getCredentialsProvider().resolveCredentials().block(Duration.ofSeconds(5));
        if (credentials != null && credentials.hasUsername()) {
            props.put("spring.data.redis.username", credentials.getUsername());
        }
        if (credentials != null && credentials.hasPassword()) {
            props.put("spring.data.redis.password", new String(credentials.getPassword()));
        }
        if (uri.getDatabase() != 0) {
            props.put("spring.data.redis.database", Integer.toString(uri.getDatabase()));
        }
        if (uri.isSsl()) {
            props.put("spring.data.redis.ssl.enabled", "true");
        }
        return props;
    }

    /**
     * A {@code redis-server} executable, found the way the tests find theirs (the PATH first, then the embedded-redis
     * binary): for tests that run servers of their own (fault injection: AOF, kill -9, SIGSTOP, replicas).
     */
    public static Path redisServerExecutable() {
        List<String> tried = new ArrayList<>();
        for (Route route : Route.values()) {
            Path executable = route.executable(tried);
            if (executable != null) {
                return executable;
            }
        }
        throw noRedis("redis-server executable", tried);
    }

    /** A free loopback port; with {@code withClusterBus}, port + 10000 is free too. */
    public static int freePort(boolean withClusterBus) throws IOException {
        return RedisServerProcess.freePort(withClusterBus);
    }

    /** The per-JVM Lettuce resources shared by every client made here; clients created with them do not shut them down. */
    public static ClientResources resources() {
        synchronized (SHARED_LOCK) {
            if (clientResources == null) {
                clientResources = DefaultClientResources.create();
                registerShutdownHook();
            }
            return clientResources;
        }
    }

    /**
     * Stops every server this JVM started, deletes their temporary files and releases the shared client resources.
     * External servers are left alone. A later call to any accessor starts afresh. Public for rmq-test's
     * {@code @RmqTest}, which closes the Spring contexts it wired before it stops the servers.
     */
    public static void stopAll() {
        synchronized (STANDALONE_LOCK) {
            synchronized (CLUSTER_LOCK) {
                synchronized (SHARED_LOCK) {
                    closeStandaloneAdmin();
                    closeClusterAdmin();
                    List<RedisServerProcess> toStop = new ArrayList<>();
                    if (standalone != null) {
                        toStop.addAll(standalone.processes());
                    }
                    if (cluster != null) {
                        toStop.addAll(cluster.processes());
                    }
                    standalone = null;
                    cluster = null;
                    toStop.forEach(RedisServerProcess::stopQuietly);
                    LIVE_PROCESSES.removeAll(toStop);
                    if (!toStop.isEmpty()) {
                        log("stopped " + toStop.size() + " redis-server process(es) "
                                + toStop.stream().map(p -> Integer.toString(p.endpoint().port())).collect(Collectors.joining(",")));
                    }
                    if (workRoot != null) {
                        RedisServerProcess.deleteRecursively(workRoot);
                        LIVE_TEMP_DIRS.remove(workRoot);
                        workRoot = null;
                        bundledExecutable = null;
                    }
                    if (clientResources != null) {
                        clientResources.shutdown(0, 2, TimeUnit.SECONDS);
                        clientResources = null;
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------- standalone

    private static Deployment standaloneDeployment() {
        synchronized (STANDALONE_LOCK) {
            if (standalone == null) {
                standalone = startStandalone();
            }
            return standalone;
        }
    }

    private static RedisURI standaloneUri() {
        Deployment deployment = standaloneDeployment();
        if (deployment.standaloneUrl() != null) {
            return RedisURI.create(deployment.standaloneUrl()); // fresh copy: RedisURI is mutable
        }
        RedisEndpoint endpoint = deployment.endpoints().get(0);
        return RedisURI.create(endpoint.host(), endpoint.port());
    }

    private static Deployment startStandalone() {
        String url = env(ENV_STANDALONE_URL);
        if (url != null) {
            RedisURI uri = RedisURI.create(url);
            RedisEndpoint endpoint = new RedisEndpoint(uri.getHost(), uri.getPort());
            log("standalone: external server from " + ENV_STANDALONE_URL + " at " + endpoint + " (not managed)");
            return new Deployment("environment " + ENV_STANDALONE_URL, List.of(endpoint), List.of(), url);
        }
        List<String> tried = new ArrayList<>();
        tried.add(ENV_STANDALONE_URL + ": not set");
        for (Route route : Route.values()) {
            Path executable = route.executable(tried);
            if (executable == null) {
                continue;
            }
            long started = System.nanoTime();
            try {
                RedisServerProcess server = RedisServerProcess.start(executable, workRoot(), false);
                LIVE_PROCESSES.add(server);
                log("standalone: " + route.describe(executable) + ", redis " + server.version() + " on "
                        + server.endpoint() + ", ready in " + millisSince(started) + " ms");
                return new Deployment(route.name(), List.of(server.endpoint()), List.of(server), null);
            } catch (IOException | RuntimeException e) {
                tried.add(route.describe(executable) + ": " + e.getMessage());
                log("standalone: " + route.describe(executable) + " failed, trying the next route: " + e.getMessage());
            }
        }
        throw noRedis("standalone", tried);
    }

    // ---------------------------------------------------------------------------------------------------- cluster

    private static Deployment clusterDeployment() {
        synchronized (CLUSTER_LOCK) {
            if (cluster == null) {
                cluster = startCluster();
            }
            return cluster;
        }
    }

    private static Deployment startCluster() {
        String nodes = env(ENV_CLUSTER_NODES);
        if (nodes != null) {
            List<RedisEndpoint> endpoints = parseNodes(nodes);
            log("cluster: external nodes from " + ENV_CLUSTER_NODES + " " + endpoints + " (not managed)");
            return new Deployment("environment " + ENV_CLUSTER_NODES, endpoints, List.of(), null);
        }
        List<String> tried = new ArrayList<>();
        tried.add(ENV_CLUSTER_NODES + ": not set");
        for (Route route : Route.values()) {
            Path executable = route.executable(tried);
            if (executable == null) {
                continue;
            }
            long started = System.nanoTime();
            List<RedisServerProcess> servers = new ArrayList<>();
            try {
                for (int i = 0; i < CLUSTER_MASTERS; i++) {
                    RedisServerProcess server = RedisServerProcess.start(executable, workRoot(), true);
                    servers.add(server);
                    LIVE_PROCESSES.add(server);
                }
                List<RedisEndpoint> endpoints = servers.stream().map(RedisServerProcess::endpoint).toList();
                long launched = System.nanoTime();
                formCluster(endpoints);
                log("cluster: " + route.describe(executable) + ", redis " + servers.get(0).version() + ", "
                        + CLUSTER_MASTERS + " masters on " + endpoints + ", ready in " + millisSince(started)
                        + " ms (processes " + TimeUnit.NANOSECONDS.toMillis(launched - started) + " ms, forming "
                        + millisSince(launched) + " ms)");
                return new Deployment(route.name(), endpoints, List.copyOf(servers), null);
            } catch (IOException | RuntimeException e) {
                servers.forEach(RedisServerProcess::stopQuietly);
                LIVE_PROCESSES.removeAll(servers);
                tried.add(route.describe(executable) + ": " + e);
                log("cluster: " + route.describe(executable) + " failed, trying the next route: " + e);
            }
        }
        throw noRedis("cluster", tried);
    }

    private static List<RedisEndpoint> parseNodes(String nodes) {
        List<RedisEndpoint> endpoints = new ArrayList<>();
        for (String node : nodes.split(",")) {
            String hostPort = node.strip();
            if (hostPort.isEmpty()) {
                continue;
            }
            int colon = hostPort.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException(ENV_CLUSTER_NODES + " entry is not host:port: " + hostPort);
            }
            String host = hostPort.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            endpoints.add(new RedisEndpoint(host, Integer.parseInt(hostPort.substring(colon + 1))));
        }
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException(ENV_CLUSTER_NODES + " lists no node: " + nodes);
        }
        return List.copyOf(endpoints);
    }

    private static List<RedisURI> clusterSeeds(List<RedisEndpoint> nodes) {
        return nodes.stream().map(n -> RedisURI.create(n.host(), n.port())).collect(Collectors.toList());
    }

    /** Slots of master {@code index} of {@code count}, split like redis-cli does: 0-5460, 5461-10922, 10923-16383. */
    static int[] slotRange(int index, int count) {
        double perNode = (double) CLUSTER_SLOTS / count;
        int first = (int) Math.round(index * perNode);
        int last = index == count - 1 ? CLUSTER_SLOTS - 1 : (int) Math.round((index + 1) * perNode) - 1;
        return IntStream.rangeClosed(first, last).toArray();
    }

    /** ADDSLOTS on each node, MEET them, wait for cluster_state:ok everywhere, then prove it with a cluster client. */
    private static void formCluster(List<RedisEndpoint> nodes) {
        long deadline = System.nanoTime() + CLUSTER_FORM_TIMEOUT.toNanos();
        List<RedisClient> clients = new ArrayList<>();
        List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
        try {
            for (RedisEndpoint node : nodes) {
                RedisClient client = RedisClient.create(resources(), RedisURI.create(node.host(), node.port()));
                clients.add(client);
                connections.add(client.connect());
            }
            for (int i = 0; i < nodes.size(); i++) {
                RedisCommands<String, String> commands = connections.get(i).sync();
                try {
                    commands.clusterSetConfigEpoch(i + 1); // distinct epochs up front: no collision handling needed
                } catch (RuntimeException ignored) {
                    // only an optimisation
                }
                commands.clusterAddSlots(slotRange(i, nodes.size()));
            }
            // Full mesh (each pair met once) rather than gossip: nodes learn each other's slots without waiting for
            // the gossip round of a third node.
            for (int i = 0; i < nodes.size(); i++) {
                for (int j = i + 1; j < nodes.size(); j++) {
                    connections.get(i).sync().clusterMeet(nodes.get(j).host(), nodes.get(j).port());
                }
            }
            awaitClusterOk(connections, nodes, deadline);
        } finally {
            connections.forEach(StatefulRedisConnection::close);
            clients.forEach(c -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        }
        awaitClusterClientWorks(nodes, deadline);
    }

    private static void awaitClusterOk(List<StatefulRedisConnection<String, String>> connections,
                                       List<RedisEndpoint> nodes, long deadline) {
        String lastProblem = "";
        while (System.nanoTime() < deadline) {
            lastProblem = "";
            for (int i = 0; i < connections.size() && lastProblem.isEmpty(); i++) {
                RedisCommands<String, String> commands = connections.get(i).sync();
                String info = commands.clusterInfo();
                String state = infoField(info, "cluster_state");
                String known = infoField(info, "cluster_known_nodes");
                String size = infoField(info, "cluster_size");
                long masters = healthyMasters(commands.clusterNodes());
                int n = nodes.size();
                if (!"ok".equals(state) || !String.valueOf(n).equals(known) || !String.valueOf(n).equals(size) || masters != n) {
                    lastProblem = nodes.get(i) + ": cluster_state=" + state + " known_nodes=" + known
                            + " cluster_size=" + size + " healthy masters=" + masters;
                }
            }
            if (lastProblem.isEmpty()) {
                return;
            }
            pause(50);
        }
        throw new IllegalStateException("cluster did not become ok within " + CLUSTER_FORM_TIMEOUT + ": " + lastProblem);
    }

    /** Masters in CLUSTER NODES output that have an address, are connected and are not failing or in handshake. */
    static long healthyMasters(String clusterNodes) {
        return clusterNodes.lines().map(String::strip).filter(l -> !l.isEmpty()).filter(line -> {
            String[] fields = line.split(" ");
            if (fields.length < 8) {
                return false;
            }
            List<String> flags = List.of(fields[2].split(","));
            return flags.contains("master") && !flags.contains("fail") && !flags.contains("fail?")
                    && !flags.contains("handshake") && !flags.contains("noaddr")
                    && !fields[1].startsWith(":") && "connected".equals(fields[7]);
        }).count();
    }

    static String infoField(String info, String field) {
        return info.lines().filter(l -> l.startsWith(field + ":")).map(l -> l.substring(field.length() + 1).strip())
                .findFirst().orElse(null);
    }

    /** SET/GET through a RedisClusterClient on a key in every master's slot range, retrying until the deadline. */
    private static void awaitClusterClientWorks(List<RedisEndpoint> nodes, long deadline) {
        List<String> probes = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            int[] range = slotRange(i, nodes.size());
            probes.add(keyInSlots("rmq-test-probe-", range[0], range[range.length - 1]));
        }
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            RedisClusterClient client = RedisClusterClient.create(resources(), clusterSeeds(nodes));
            try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
                long masters = connection.getPartitions().stream().filter(n -> n.getRole().isUpstream()).count();
                if (masters != nodes.size()) {
                    throw new IllegalStateException("cluster client sees " + masters + " masters");
                }
                for (String key : probes) {
                    connection.sync().set(key, key);
                    if (!key.equals(connection.sync().get(key))) {
                        throw new IllegalStateException("GET " + key + " did not return what was SET");
                    }
                    connection.sync().del(key);
                }
                return;
            } catch (RuntimeException e) {
                last = e;
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            pause(100);
        }
        throw new IllegalStateException("cluster client could not SET/GET on every master", last);
    }

    /** A key {@code prefix{N}} whose hash slot lies in [first, last]. */
    static String keyInSlots(String prefix, int first, int last) {
        for (int i = 0; ; i++) {
            String key = prefix + "{" + i + "}";
            int slot = SlotHash.getSlot(key);
            if (slot >= first && slot <= last) {
                return key;
            }
        }
    }

    // ------------------------------------------------------------------------------------------- executables

    /** Where a redis-server executable can come from, in order of preference. */
    private enum Route {
        PATH {
            @Override
            Path find() throws IOException {
                String path = System.getenv("PATH");
                if (path != null) {
                    boolean windows = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
                    for (String dir : path.split(File.pathSeparator)) {
                        if (dir.isBlank()) {
                            continue;
                        }
                        for (String name : windows ? List.of("redis-server.exe", "redis-server") : List.of("redis-server")) {
                            Path candidate = Path.of(dir, name);
                            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                                return candidate;
                            }
                        }
                    }
                }
                throw new FileNotFoundException("no redis-server on PATH");
            }

            @Override
            String describe(Path executable) {
                return "redis-server on PATH (" + executable + ")";
            }
        },
        BUNDLED {
            @Override
            Path find() throws IOException {
                return extractBundledExecutable();
            }

            @Override
            String describe(Path executable) {
                return "embedded-redis bundled binary " + executable.getFileName();
            }
        };

        abstract Path find() throws IOException;

        abstract String describe(Path executable);

        /** The executable, or {@code null} after adding why not to {@code tried}. */
        Path executable(List<String> tried) {
            try {
                return find();
            } catch (IOException | RuntimeException | LinkageError e) {
                tried.add(name().toLowerCase(Locale.ROOT) + ": " + e.getMessage());
                return null;
            }
        }
    }

    private static Path extractBundledExecutable() throws IOException {
        synchronized (SHARED_LOCK) {
            if (bundledExecutable != null && Files.isExecutable(bundledExecutable)) {
                return bundledExecutable;
            }
            String resource = bundledResourceName();
            URL url = findResource(resource);
            if (url == null) {
                throw new FileNotFoundException("resource /" + resource + " is not on the class path (is "
                        + "com.github.codemonstur:embedded-redis a test dependency of this module?)");
            }
            Path dir = Files.createDirectories(workRoot().resolve("bin"));
            Path target = dir.resolve(resource);
            try (InputStream in = url.openStream()) {
                Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            }
            if (!target.toFile().setExecutable(true, true)) {
                throw new IOException("could not make " + target + " executable");
            }
            bundledExecutable = target;
            return target;
        }
    }

    private static URL findResource(String resource) {
        List<ClassLoader> loaders = new ArrayList<>();
        loaders.add(TestRedisServers.class.getClassLoader());
        loaders.add(Thread.currentThread().getContextClassLoader());
        for (ClassLoader loader : loaders) {
            if (loader != null) {
                URL url = loader.getResource(resource);
                if (url != null) {
                    return url;
                }
            }
        }
        return null;
    }

    /**
     * The jar resource holding redis-server for this OS/architecture. Asks embedded-redis itself first (its
     * {@code ExecutableProvider.newProvidedVersionsMap()} keyed by {@code OsArchitecture.detectOSandArchitecture()},
     * by reflection so this class loads without the jar), then falls back to the names in embedded-redis 1.4.4.
     */
    static String bundledResourceName() {
        try {
            Class<?> provider = Class.forName("redis.embedded.core.ExecutableProvider");
            Class<?> osArchitecture = Class.forName("redis.embedded.model.OsArchitecture");
            Map<?, ?> versions = (Map<?, ?>) provider.getMethod("newProvidedVersionsMap").invoke(null);
            Object detected = osArchitecture.getMethod("detectOSandArchitecture").invoke(null);
            Object name = versions.get(detected);
            if (name != null) {
                return stripSlash(name.toString());
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError ignored) {
            // fall back to our own table
        }
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        if (os.startsWith("windows") && x64) {
            return "redis-server-5.0.14.1-windows-amd64.exe";
        }
        if (os.startsWith("mac") || os.startsWith("darwin")) {
            if (x64) {
                return "redis-server-6.2.6-v5-darwin-amd64";
            }
            if (arm64) {
                return "redis-server-6.2.6-v5-darwin-arm64";
            }
        }
        if (!os.startsWith("windows")) {
            if (x64) {
                return "redis-server-6.2.6-v5-linux-amd64";
            }
            if (arm64) {
                return "redis-server-6.2.7-linux-arm64";
            }
            if (arch.equals("x86") || arch.matches("i[3-6]86")) {
                return "redis-server-6.2.7-linux-386";
            }
        }
        throw new IllegalStateException("embedded-redis bundles no redis-server for os.name=" + os + " os.arch=" + arch);
    }

    private static String stripSlash(String name) {
        return name.startsWith("/") ? name.substring(1) : name;
    }

    // ------------------------------------------------------------------------------------------------ plumbing

    /** Servers started elsewhere in this package (a {@link PrivateCluster}) are stopped by the shutdown hook too. */
    static void track(RedisServerProcess server) {
        LIVE_PROCESSES.add(server);
        registerShutdownHook();
    }

    static void untrack(RedisServerProcess server) {
        LIVE_PROCESSES.remove(server);
    }

    static Path workRoot() throws IOException {
        synchronized (SHARED_LOCK) {
            if (workRoot == null || !Files.isDirectory(workRoot)) {
                workRoot = Files.createTempDirectory("rmq-test-redis-");
                LIVE_TEMP_DIRS.add(workRoot);
                registerShutdownHook();
            }
            return workRoot;
        }
    }

    private static void registerShutdownHook() {
        synchronized (SHARED_LOCK) {
            if (shutdownHookRegistered) {
                return;
            }
            Thread hook = new Thread(TestRedisServers::shutdownHook, "rmq-test-redis-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            shutdownHookRegistered = true;
        }
    }

    /** Lock-free: a test thread may still hold a lock while the JVM exits. */
    private static void shutdownHook() {
        RedisServerProcess server;
        while ((server = LIVE_PROCESSES.poll()) != null) {
            server.stopQuietly();
        }
        Path dir;
        while ((dir = LIVE_TEMP_DIRS.poll()) != null) {
            RedisServerProcess.deleteRecursively(dir);
        }
    }

    private static void closeStandaloneAdmin() {
        if (standaloneAdmin != null) {
            standaloneAdmin.close();
            standaloneAdmin = null;
        }
        if (standaloneAdminClient != null) {
            standaloneAdminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            standaloneAdminClient = null;
        }
    }

    private static void closeClusterAdmin() {
        if (clusterAdmin != null) {
            clusterAdmin.close();
            clusterAdmin = null;
        }
        if (clusterAdminClient != null) {
            clusterAdminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            clusterAdminClient = null;
        }
    }

    private static IllegalStateException noRedis(String what, List<String> tried) {
        return new IllegalStateException("No Redis " + what + " server for tests. Tried, in order: "
                + String.join("; ", tried) + "; testcontainers: not supported by this harness. Set "
                + (what.equals("cluster") ? ENV_CLUSTER_NODES + "=host:port,host:port,host:port" : ENV_STANDALONE_URL + "=redis://host:port")
                + ", put redis-server on the PATH, or add com.github.codemonstur:embedded-redis to the test class path.");
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value.strip();
    }

    private static long millisSince(long nanoTime) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoTime);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void log(String line) {
        System.err.println(LOG_PREFIX + line);
    }
}
