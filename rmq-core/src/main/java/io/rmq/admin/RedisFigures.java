package io.rmq.admin;

import java.util.List;

/**
 * What the Redis that RMQ uses looks like, as {@link RmqAdmin#redis()} reads it.
 *
 * @param version       the server version (of the first master of a cluster)
 * @param mode          {@code standalone} or {@code cluster}
 * @param usedMemory    bytes in use ({@code used_memory}), summed over a cluster's masters
 * @param peakMemory    the peak ({@code used_memory_peak}), summed over a cluster's masters
 * @param clients       connected clients, summed over a cluster's masters
 * @param rmqKeys       keys named {@code <prefix>:...} (RMQ's), counted with SCAN
 * @param rmqKeysCapped the count stopped after examining {@link RmqAdmin#REDIS_KEYS_EXAMINED} keys: {@code rmqKeys} is
 *                      a lower bound
 * @param nodes         a cluster's nodes (CLUSTER NODES); empty standalone
 */
public record RedisFigures(String version, String mode, long usedMemory, long peakMemory, long clients, long rmqKeys,
        boolean rmqKeysCapped, List<Node> nodes) {

    /**
     * One cluster node.
     *
     * @param id      its node id
     * @param address host:port
     * @param role    {@code master} or {@code replica}
     * @param slots   the hash slots it serves as ranges ({@code 0-5460}), empty when none
     * @param state   {@code ok}, {@code fail}, {@code pfail} or {@code disconnected}
     */
    public record Node(String id, String address, String role, String slots, String state) {
    }
}
