package io.rmq.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The ORDERLY records of a run ({@link FaultRun#intervals()}) read per group instead of per slot: message {@code m-i}
 * is in group {@code i % groups} with sequence number {@code i / groups} in it, as {@link FaultRun#send} sends them.
 * Computed from the consumers' own records and the sender's numbering, never from what the engine says a group is.
 */
final class GroupOrder {

    private final int groups;
    /** Each group's handlings in order of start (a consumer records a handling when its handler returns). */
    private final Map<Integer, List<FaultRun.Interval>> byGroup = new TreeMap<>();
    private final Map<Integer, List<FaultRun.Interval>> bySlot;

    GroupOrder(Map<Integer, List<FaultRun.Interval>> bySlot, int groups) {
        this.groups = groups;
        this.bySlot = bySlot;
        bySlot.values().forEach(list -> list.forEach(interval -> byGroup.computeIfAbsent(interval.index() % groups,
                g -> new ArrayList<>()).add(interval)));
        byGroup.values().forEach(list -> list.sort(Comparator.comparingLong(FaultRun.Interval::start)));
    }

    /**
     * What broke ORDERLY's promises per group, with the rule {@link FaultRun#orderViolations} applies per slot, made
     * stricter about repeats:
     * <ul>
     * <li>two handlings of one group overlap in time (a group is handled one message at a time, also across JVMs: a
     * killed owner records nothing after its kill, and its successor starts after the ownership ran out);</li>
     * <li>a message is first handled after a later message of its group was (going backwards);</li>
     * <li>a message is handled again although no earlier handling of it was by a consumer in {@code killed}: the only
     * repeats allowed are of handlings a kill -9 caught before their ack.</li>
     * </ul>
     */
    List<String> violations(Set<String> killed) {
        List<String> violations = new ArrayList<>();
        byGroup.forEach((group, handlings) -> {
            Map<Integer, List<FaultRun.Interval>> earlier = new HashMap<>();
            FaultRun.Interval latest = null;
            int highest = -1;
            for (FaultRun.Interval handling : handlings) {
                if (latest != null && handling.start() < latest.end()) {
                    violations.add("group " + group + ": " + latest + " overlaps " + handling);
                }
                List<FaultRun.Interval> before = earlier.computeIfAbsent(handling.index(), i -> new ArrayList<>());
                if (before.isEmpty()) {
                    if (handling.index() < highest) {
                        violations.add("group " + group + ": m-" + handling.index() + " first handled after m-"
                                + highest);
                    }
                    highest = Math.max(highest, handling.index());
                }
                else if (before.stream().noneMatch(b -> killed.contains(b.consumer()))) {
                    violations.add("group " + group + ": m-" + handling.index() + " handled again (" + handling
                            + ") though no consumer that handled it before was killed: " + before);
                }
                before.add(handling);
                latest = latest == null || handling.end() > latest.end() ? handling : latest;
            }
        });
        return violations;
    }

    /** Groups whose handlings were in more than one slot (routing by group must keep a group in one slot). */
    List<Integer> groupsInSeveralSlots() {
        List<Integer> found = new ArrayList<>();
        byGroup.forEach((group, handlings) -> {
            if (handlings.stream().map(FaultRun.Interval::slot).distinct().count() > 1) {
                found.add(group);
            }
        });
        return found;
    }

    /** How many groups had a handling: every group, once every message was handled. */
    int groupsHandled() {
        return byGroup.size();
    }

    /** Handlings of a message that had been handled before (by any consumer). */
    int repeats() {
        int repeats = 0;
        for (List<FaultRun.Interval> handlings : byGroup.values()) {
            Set<Integer> seen = new HashSet<>();
            for (FaultRun.Interval handling : handlings) {
                if (!seen.add(handling.index())) {
                    repeats++;
                }
            }
        }
        return repeats;
    }

    /**
     * The most handlings of one slot that ran at once in one consumer: 1 where a slot is handled one message at a
     * time, up to the listener's concurrency where its groups run in parallel.
     */
    int mostAtOnceInASlot() {
        int most = 0;
        for (List<FaultRun.Interval> handlings : bySlot.values()) {
            Map<String, List<long[]>> events = new HashMap<>();
            for (FaultRun.Interval handling : handlings) {
                List<long[]> list = events.computeIfAbsent(handling.consumer(), c -> new ArrayList<>());
                list.add(new long[] {handling.start(), 1});
                list.add(new long[] {handling.end(), -1});
            }
            for (List<long[]> list : events.values()) {
                // at one millisecond an end comes before a start: records have millisecond resolution
                list.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
                int now = 0;
                for (long[] event : list) {
                    now += (int) event[1];
                    most = Math.max(most, now);
                }
            }
        }
        return most;
    }

    int groups() {
        return groups;
    }
}
