package io.rmq.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import io.lettuce.core.cluster.SlotHash;

/**
 * How a topic's slots fall on the masters of a Redis Cluster: RMQ slot {@code i} of topic {@code t} keeps all its keys
 * under the hash tag {@code {t:i}}, so in the cluster hash slot CRC16 of that tag mod 16384, served by the master
 * whose ranges hold it. One topic cannot go faster than its busiest master, so an uneven spread (16 slots: 5/6/5)
 * limits how far it scales with masters. The ranges come from each master's own {@code CLUSTER NODES} line (the one
 * flagged {@code myself}), i.e. from the cluster as it runs. Immutable.
 *
 * @param slots the topic's slot count
 * @param perMaster how many of those slots each master serves, in the order of the masters given
 */
record SlotSpread(int slots, int[] perMaster) {

    /** The spread of {@code topic}'s {@code slots} over masters whose {@code CLUSTER NODES} replies are given in order. */
    static SlotSpread of(String topic, int slots, List<String> clusterNodesOfEachMaster) {
        List<int[]> ranges = clusterNodesOfEachMaster.stream().map(SlotSpread::ownRanges).toList();
        int[] counts = new int[ranges.size()];
        for (int i = 0; i < slots; i++) {
            int hashSlot = SlotHash.getSlot("{" + topic + ":" + i + "}");
            int master = masterOf(hashSlot, ranges);
            if (master < 0) {
                throw new IllegalStateException("no master serves hash slot " + hashSlot + " (slot " + i + " of "
                        + topic + ")");
            }
            counts[master]++;
        }
        return new SlotSpread(slots, counts);
    }

    /** One server: every slot on it. */
    static SlotSpread standalone(int slots) {
        return new SlotSpread(slots, new int[] {slots});
    }

    /** {@code 5/6/5}. */
    String counts() {
        return Arrays.stream(perMaster).mapToObj(Integer::toString).collect(Collectors.joining("/"));
    }

    /** {@code 16 slots: 5/6/5 (max 6 = 1.13× even)}: the busiest master's share against an even split. */
    String describe() {
        int max = Arrays.stream(perMaster).max().orElse(0);
        return String.format(Locale.ROOT, "%d slots: %s (max %d = %.2f× even)", slots, counts(), max,
                max * perMaster.length / (double) slots);
    }

    /** The hash-slot ranges {@code [first, last]} of the node that sent this {@code CLUSTER NODES} reply. */
    static int[] ownRanges(String clusterNodes) {
        for (String line : clusterNodes.split("\\r?\\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length < 3 || !Arrays.asList(fields[2].split(",")).contains("myself")) {
                continue;
            }
            List<Integer> bounds = new ArrayList<>();
            for (int f = 8; f < fields.length; f++) {
                if (fields[f].startsWith("[")) {
                    continue; // a slot being migrated or imported: still served by its owner's range
                }
                String[] range = fields[f].split("-");
                bounds.add(Integer.parseInt(range[0]));
                bounds.add(Integer.parseInt(range[range.length - 1]));
            }
            return bounds.stream().mapToInt(Integer::intValue).toArray();
        }
        throw new IllegalStateException("no 'myself' line in CLUSTER NODES: " + clusterNodes);
    }

    private static int masterOf(int hashSlot, List<int[]> ranges) {
        for (int m = 0; m < ranges.size(); m++) {
            int[] bounds = ranges.get(m);
            for (int b = 0; b + 1 < bounds.length; b += 2) {
                if (hashSlot >= bounds[b] && hashSlot <= bounds[b + 1]) {
                    return m;
                }
            }
        }
        return -1;
    }
}
