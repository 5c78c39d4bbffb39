package io.rmq.coordination.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.RmqException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The original RMQ design's coordinator: ORDERLY consumers register in ZooKeeper, through Apache Curator, and slots
 * are assigned from the registered workers.
 * <pre>
 * &lt;root&gt;/&lt;topic&gt;/members/&lt;instance id&gt;   ephemeral: a live consumer instance
 * &lt;root&gt;/&lt;topic&gt;/owners/&lt;slot&gt;          ephemeral, data = instance id: the slot's owner
 * </pre>
 * Every instance computes the same round-robin share from the member list and creates the owner node of each slot
 * of its share once the previous owner's node is gone (deleted on release, or by ZooKeeper when the owner's session
 * expired). The owner node's creation zxid is the slot's epoch: it only grows, so the claim in Redis
 * ({@code own.lua}) takes over from any older owner and the fencing stays in Redis. The Curator client is the
 * caller's (its session timeout is how long a dead instance keeps its slots).
 * <p>
 * Since the next owner's claim follows the session, not the previous owner's ownership time in Redis, the session
 * bounds how long an owner may start handlers: {@link Membership#assignmentTimeout()} is the session timeout the
 * server granted (counted from the start of the last successful {@code assignedSlots()}, which the server answered
 * within the session), and {@link Membership#assured()} turns false as soon as Curator reports the connection
 * SUSPENDED or LOST (Curator's own advice for locks and leaders), until a later call succeeds. The container then
 * starts no handler past the shorter of the session and the ownership, so any pair of settings is safe, and a short
 * session gives a fast take-over.
 */
public final class ZooKeeperSlotCoordinator implements SlotCoordinator {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperSlotCoordinator.class);

    private final CuratorFramework curator;
    private final String root;

    /**
     * @param curator a started Curator client
     * @param root    the path under which RMQ keeps its nodes, e.g. {@code /rmq}
     */
    public ZooKeeperSlotCoordinator(CuratorFramework curator, String root) {
        if (root == null || !root.startsWith("/") || root.length() > 1 && root.endsWith("/")) {
            throw new io.rmq.core.RmqInvalidArgumentException("ZooKeeper root path", root,
                    "must start with '/' and not end with '/' (e.g. /rmq)");
        }
        this.curator = curator;
        this.root = root.equals("/") ? "" : root;
    }

    @Override
    public Membership join(String topic, String instanceId, int slotAmount, Duration ownershipTimeout) {
        String base = root + "/" + topic;
        String member = base + "/members/" + instanceId;
        byte[] me = instanceId.getBytes(StandardCharsets.UTF_8);
        // counts the suspensions and losses of the connection: an assignment is assured while none came since the
        // start of the last successful assignedSlots()
        AtomicLong interruptions = new AtomicLong();
        ConnectionStateListener connection = (client, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                interruptions.incrementAndGet();
                // a coordination call may block through the whole stall and log nothing: say what it means here
                log.warn("ZooKeeper connection {} (topic '{}', instance '{}'): its ORDERLY slots start no handler"
                        + " until a coordination call succeeds again", state, topic, instanceId);
            }
        };
        curator.getConnectionStateListenable().addListener(connection);
        return new Membership() {

            private volatile long assuredAt = -1;
            private volatile long sessionTimeoutMillis;

            @Override
            public Map<Integer, Long> assignedSlots() {
                long seen = interruptions.get();
                try {
                    if (curator.checkExists().forPath(member) == null) {
                        // first call, or the session expired and took the node with it
                        curator.create().orSetData().creatingParentContainersIfNeeded()
                                .withMode(CreateMode.EPHEMERAL).forPath(member, me);
                    }
                    List<String> members = curator.getChildren().forPath(base + "/members");
                    Set<Integer> share = SlotCoordinator.share(members, slotAmount, instanceId);
                    Map<Integer, Long> owned = new LinkedHashMap<>();
                    long session = curator.getZookeeperClient().getZooKeeper().getSessionId();
                    for (int slot : share) {
                        Long epoch = own(base + "/owners/" + slot, me, session);
                        if (epoch != null) {
                            owned.put(slot, epoch);
                        }
                    }
                    sessionTimeoutMillis = sessionTimeout();
                    long before = assuredAt;
                    assuredAt = seen;
                    if (before >= 0 && before != seen) {
                        log.info("ZooKeeper coordination of topic '{}' (instance '{}') answered again: its ORDERLY"
                                + " slots may start handlers", topic, instanceId);
                    }
                    return owned;
                }
                catch (Exception ex) {
                    throw new RmqException("ZooKeeper coordination of topic '" + topic + "' failed: " + ex, ex);
                }
            }

            /**
             * The session timeout the server granted: the server keeps the session (and its owner nodes) for at
             * least that long after it last heard from this client, so at least that long after the start of a call
             * it answered. It may differ from the one asked for (the server bounds it by 2 and 20 ticks).
             */
            @Override
            public Duration assignmentTimeout() {
                return Duration.ofMillis(sessionTimeoutMillis);
            }

            @Override
            public boolean assured() {
                return assuredAt == interruptions.get();
            }

            @Override
            public void released(int slot) {
                deleteIfMine(base + "/owners/" + slot, me);
            }

            @Override
            public void close() {
                curator.getConnectionStateListenable().removeListener(connection);
                try {
                    List<String> owners = curator.checkExists().forPath(base + "/owners") == null
                            ? List.of() : curator.getChildren().forPath(base + "/owners");
                    for (String slot : owners) {
                        deleteIfMine(base + "/owners/" + slot, me);
                    }
                    curator.delete().quietly().forPath(member);
                }
                catch (Exception ex) {
                    throw new RmqException("Leaving the ZooKeeper group of topic '" + topic + "' failed: " + ex, ex);
                }
            }
        };
    }

    /** The session timeout the server granted, or (not yet connected) the one asked for. */
    private long sessionTimeout() throws Exception {
        int negotiated = curator.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 ? negotiated : curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
    }

    /** Creates the owner node, or finds it ours; its creation zxid is the epoch. Null while another owns it. */
    private @Nullable Long own(String path, byte[] me, long session) throws Exception {
        Stat stat = new Stat();
        try {
            curator.create().storingStatIn(stat).creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL)
                    .forPath(path, me);
            return stat.getCzxid();
        }
        catch (KeeperException.NodeExistsException exists) {
            try {
                byte[] data = curator.getData().storingStatIn(stat).forPath(path);
                return java.util.Arrays.equals(data, me) && stat.getEphemeralOwner() == session ? stat.getCzxid() : null;
            }
            catch (KeeperException.NoNodeException gone) {
                return null; // released meanwhile: claimed at the next tick
            }
        }
    }

    private void deleteIfMine(String path, byte[] me) {
        try {
            Stat stat = new Stat();
            byte[] data = curator.getData().storingStatIn(stat).forPath(path);
            if (java.util.Arrays.equals(data, me)) {
                curator.delete().withVersion(stat.getVersion()).forPath(path);
            }
        }
        catch (KeeperException.NoNodeException | KeeperException.BadVersionException gone) {
            // not ours any more
        }
        catch (Exception ex) {
            throw new RmqException("Releasing ZooKeeper node " + path + " failed: " + ex, ex);
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper";
    }
}
