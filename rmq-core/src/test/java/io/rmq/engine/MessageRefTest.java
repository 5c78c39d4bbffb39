package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.WaitingMessage;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.SlotRouter;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One value names a message for every admin operation: by the body or id it was sent with (and its group), or as a
 * view listed it. Each way finds the same stored message; bad references are refused naming field, value and rule.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class MessageRefTest extends EngineTestSupport {

    private static final Instant LATER = Instant.now().plus(Duration.ofHours(1));

    MessageRefTest(RedisTopology topology) {
        super(topology);
    }

    /** A group that routes to another slot than {@code identity} does. */
    private static String groupAwayFrom(String identity, int slots) {
        int own = SlotRouter.slot(identity.getBytes(StandardCharsets.UTF_8), slots);
        String group = "account-1";
        for (int i = 2; SlotRouter.slot(group.getBytes(StandardCharsets.UTF_8), slots) == own; i++) {
            group = "account-" + i;
        }
        return group;
    }

    @Test
    void aMessageIsFoundAlikeByWhatItWasSentWithAndByTheRefOfTheViewThatListedIt() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 16);
        String bodyGroup = groupAwayFrom("entry-1", 16);
        String idGroup = groupAwayFrom("pay-1", 16);
        rmq.producer().send(OutgoingMessage.fixedTime("ledger", "entry-1", LATER).withGroup(bodyGroup));
        rmq.producer().send(OutgoingMessage.fixedTime("ledger", "payload", LATER.plusSeconds(1)).withId("pay-1")
                .withGroup(idGroup));

        MessageRef byBody = MessageRef.body("ledger", "entry-1").inGroup(bodyGroup);
        MessageRef byId = MessageRef.id("ledger", "pay-1").inGroup(idGroup);
        assertThat(rmq.admin().find(MessageRef.body("ledger", "entry-1")).exists()).as("without its group").isFalse();
        assertThat(rmq.admin().find(MessageRef.id("ledger", "pay-1")).exists()).as("without its group").isFalse();
        MessageStatus body = rmq.admin().find(byBody);
        MessageStatus id = rmq.admin().find(byId);
        assertThat(body.isWaiting()).isTrue();
        assertThat(id.isWaiting()).isTrue();
        assertThat(id.id()).isEqualTo("pay-1");
        assertThat(id.bodyAsString()).isEqualTo("payload");

        List<WaitingMessage> listed = rmq.admin().browse("ledger", null, 10).messages();
        assertThat(listed).hasSize(2);
        MessageRef bodyShown = listed.get(0).ref();
        MessageRef idShown = listed.get(1).ref();
        assertThat(bodyShown.slot()).isEqualTo(body.slot());
        assertThat(bodyShown.id()).isNull();
        assertThat(idShown.id()).isEqualTo("pay-1");
        assertThat(rmq.admin().find(bodyShown)).usingRecursiveComparison().isEqualTo(body);
        assertThat(rmq.admin().find(idShown)).usingRecursiveComparison().isEqualTo(id);
        assertThat(rmq.admin().find(MessageRef.id("ledger", "pay-1").atSlot(id.slot())))
                .usingRecursiveComparison().isEqualTo(id);
        assertThat(rmq.admin().find(MessageRef.stored("ledger", idShown.slot(), idShown.member())).id())
                .as("a stored id member names its id").isEqualTo("pay-1");

        assertThat(rmq.admin().reschedule(idShown, LATER.plusSeconds(60))).isEqualTo(RescheduleResult.RESCHEDULED);
        assertThat(rmq.admin().find(byId).waitingScore()).isEqualTo((double) LATER.plusSeconds(60).toEpochMilli());
        assertThat(rmq.admin().cancel(bodyShown).cancelled()).isTrue();
        assertThat(rmq.admin().contains(byBody)).isFalse();
        assertThat(rmq.admin().contains(byId)).isTrue();
    }

    @Test
    void aSelectionRunsNowOrCancelsTheListedMessagesOfItsTopic() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 4);
        for (int i = 0; i < 4; i++) {
            rmq.producer().sendFixedTime("timed", "m-" + i, LATER.plusSeconds(i));
        }
        List<WaitingMessage> listed = rmq.admin().browse("timed", null, 10).messages();
        assertThat(rmq.admin().runNow("timed", List.of(listed.get(0).ref(), listed.get(1).ref()))).isEqualTo(2);
        assertThat(rmq.admin().find(MessageRef.body("timed", "m-0")).waitingScore())
                .isLessThanOrEqualTo((double) Instant.now().plusSeconds(60).toEpochMilli());
        assertThat(rmq.admin().cancelSelected("timed", List.of(MessageRef.body("timed", "m-2"), listed.get(3).ref())))
                .isEqualTo(2);
        assertThat(rmq.admin().stats("timed").waiting()).isEqualTo(2);
    }

    @Test
    void aSelectionThatNamesAnotherTopicOrSlotIsRefusedWithNothingWritten() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 4);
        rmq.defineTopic("other", TopicType.FIXED_TIME, 4);
        rmq.producer().sendFixedTime("timed", "m-0", LATER);
        MessageRef mine = MessageRef.body("timed", "m-0");

        assertThatThrownBy(() -> rmq.admin().runNow("timed", List.of(mine, MessageRef.body("other", "x"))))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid messages[1].topic 'other': must be timed for every message of the selection");
        assertThatThrownBy(() -> rmq.admin().cancelSelected("timed", List.of(mine,
                MessageRef.stored("timed", 4, "x".getBytes(StandardCharsets.UTF_8)))))
                .hasMessageContaining("Invalid slot '4': must be between 0 and 3");
        assertThatThrownBy(() -> rmq.admin().cancelSelected("timed", List.of()))
                .hasMessage("Invalid messages '[]': must name at least one message");
        assertThat(rmq.admin().find(mine).waitingScore()).as("untouched").isEqualTo((double) LATER.toEpochMilli());
    }

    @Test
    void badReferencesAreRefusedNamingFieldValueAndRule() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 2);
        assertThatThrownBy(() -> MessageRef.body("timed", null)).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid body 'null': must not be null (topic 'timed')");
        assertThatThrownBy(() -> MessageRef.id("timed", ""))
                .hasMessage("Invalid id '': must not be empty (topic 'timed')");
        assertThatThrownBy(() -> MessageRef.id(null, "x")).hasMessage("Invalid topic 'null': must not be null");
        assertThatThrownBy(() -> MessageRef.stored("timed", 0, new byte[0]))
                .hasMessage("Invalid member '0 bytes': must not be empty (topic 'timed')");
        assertThatThrownBy(() -> MessageRef.id("timed", "x").inGroup("g").atSlot(1))
                .hasMessageContaining("Invalid slot '1': cannot be given with a group ('g')");
        assertThatThrownBy(() -> MessageRef.id("timed", "x").atSlot(1).inGroup("g"))
                .hasMessageContaining("Invalid group 'g': cannot be given with a slot (1)");
        assertThatThrownBy(() -> rmq.admin().find(MessageRef.body("timed", "")))
                .hasMessage("Invalid body '0 bytes': must not be empty (topic 'timed')");
        assertThatThrownBy(() -> rmq.admin().find(MessageRef.id("timed", "x").atSlot(2)))
                .hasMessageContaining("Invalid slot '2': must be between 0 and 1");
        assertThatThrownBy(() -> rmq.admin().requeueDead(MessageRef.id("no-such-topic", "x")))
                .hasMessageContaining("Invalid topic 'no-such-topic': is not defined");
    }

    @Test
    void refsAreValuesNamingWhatTheyWereMadeFrom() {
        MessageRef ref = MessageRef.id("t", "order-1").inGroup("acct");
        assertThat(ref).isEqualTo(MessageRef.id("t", "order-1").inGroup("acct"))
                .hasSameHashCodeAs(MessageRef.id("t", "order-1").inGroup("acct"))
                .isNotEqualTo(MessageRef.id("t", "order-1"));
        assertThat(ref.toString()).isEqualTo("MessageRef[topic=t, id=order-1, group=acct]");
        assertThat(MessageRef.body("t", "x".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(MessageRef.body("t", "x".getBytes(StandardCharsets.UTF_8)));
        MessageRef stored = MessageRef.stored("t", 3, new byte[] {(byte) 0xFF, 'a'});
        assertThat(stored.id()).isEqualTo("a");
        assertThat(stored.slot()).isEqualTo(3);
        assertThat(stored).isEqualTo(MessageRef.id("t", "a").atSlot(3));
        assertThat(MessageRef.body("t", "b").member()).as("serialized by the admin").isNull();
    }
}
