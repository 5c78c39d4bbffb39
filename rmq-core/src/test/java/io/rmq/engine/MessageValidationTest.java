package io.rmq.engine;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.producer.MessageLimits;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bad ids and headers: each a clear error naming the field, the value (cut) and the rule, thrown before anything is
 * written — for a single send and for a whole batch whose one bad message stops them all.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class MessageValidationTest extends EngineTestSupport {

    MessageValidationTest(RedisTopology topology) {
        super(topology);
    }

    private OutgoingMessage good(String body) {
        return OutgoingMessage.fixedTime("t", body, Instant.now());
    }

    private void assertNothingWritten() {
        assertThat(rmq.admin().stats("t").waiting()).isZero();
    }

    @Test
    void idsMustBeNonEmptyAndWithinTheLimit() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> good("a").withId(""))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid id '': must be null or non-empty (topic 't')");
        String longId = "x".repeat(300);
        assertThatThrownBy(() -> rmq.producer().send(good("a").withId(longId)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid id '" + "x".repeat(64) + "… (300 bytes)': must be at most 256 bytes"
                        + " (rmq.max-id-size; topic 't')");
        assertThatThrownBy(() -> rmq.producer().sendBatch(List.of(good("b").withId("fine"), good("c").withId(longId))))
                .hasMessageContaining("rmq.max-id-size");
        assertNothingWritten();
        // UTF-8 bytes count, not characters
        assertThatThrownBy(() -> rmq.producer().send(good("a").withId("é".repeat(129))))
                .hasMessageContaining("(258 bytes)");
        assertThat(rmq.producer().send(good("a").withId("é".repeat(128))).merged()).isFalse();
    }

    @Test
    void headerNamesMustNotUseTheReservedPrefixAndValuesMustBeStrings() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> good("a").withHeader("rmq_tenant", "acme"))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid header 'rmq_tenant': uses the reserved prefix rmq_ (topic 't')");
        assertThatThrownBy(() -> good("a").withHeader("RMQ_x", "1")).hasMessageContaining("reserved prefix");
        assertThatThrownBy(() -> good("a").withHeader("", "1"))
                .hasMessage("Invalid header name '': must be non-empty (topic 't')");
        Map<String, String> withNull = new LinkedHashMap<>();
        withNull.put("tenant", null);
        assertThatThrownBy(() -> good("a").withHeaders(withNull))
                .hasMessage("Invalid header 'tenant' value 'null': must not be null (topic 't')");
        @SuppressWarnings({"unchecked", "rawtypes"})
        Map<String, String> notAString = (Map) Map.of("attempt", 3);
        assertThatThrownBy(() -> good("a").withHeaders(notAString))
                .hasMessage("Invalid header 'attempt' value 'of type Integer': must be a String (topic 't'; convert it"
                        + " before sending)");
        // the dead-letter story's names may be carried (a dead letter re-sent as it came)
        assertThat(good("a").withHeader("rmq_dlt_attempts", "3").headers()).containsEntry("rmq_dlt_attempts", "3");
        assertNothingWritten();
    }

    @Test
    void theHeaderThatStoresTheGroupIsRefusedWhereverASenderSetsIt() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 4);
        rmq.declareConsumeMode("t", ConsumeMode.ORDERLY);
        assertThatThrownBy(() -> good("a").withHeader("rmq-group", "acct-1"))
                .isInstanceOfSatisfying(RmqInvalidArgumentException.class, ex -> {
                    assertThat(ex.getField()).isEqualTo("header");
                    assertThat(ex.getValue()).isEqualTo("rmq-group");
                })
                .hasMessage("Invalid header 'rmq-group': is reserved: RMQ stores the message's group under it; use"
                        + " withGroup (topic 't')");
        assertThatThrownBy(() -> good("a").withHeaders(Map.of("RMQ-Group", "acct-1")))
                .hasMessageContaining("is reserved: RMQ stores the message's group under it");
        assertThatThrownBy(() -> rmq.producer().send(new OutgoingMessage("t", "a", TopicType.FIXED_TIME, 0, "acct-1",
                null, Map.of("rmq-group", "acct-2"))))
                .hasMessageContaining("use withGroup");
        assertThatThrownBy(() -> rmq.producer().sendBatch(List.of(good("b").withGroup("acct-1"),
                new OutgoingMessage("t", "c", TopicType.FIXED_TIME, 0, null, null, Map.of("rmq-group", "x")))))
                .hasMessageContaining("use withGroup");
        assertNothingWritten();
    }

    @Test
    void headerSizesFollowTheLimitsAndNothingIsWritten() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> rmq.producer().send(good("a").withHeader("note", "n".repeat(2048))))
                .hasMessage("Invalid header 'note' value '2048 bytes': must be at most 1024 bytes"
                        + " (rmq.max-header-value-size; topic 't')");
        Map<String, String> many = new LinkedHashMap<>();
        for (int i = 0; i < 33; i++) {
            many.put("h" + i, "v");
        }
        assertThatThrownBy(() -> rmq.producer().send(good("a").withHeaders(many)))
                .hasMessage("Invalid headers '33 headers': must be at most 32 per message (rmq.max-headers; topic 't')");
        Map<String, String> big = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            big.put("h" + i, "v".repeat(1000));
        }
        assertThatThrownBy(() -> rmq.producer().sendBatch(List.of(good("ok"), good("a").withHeaders(big))))
                .hasMessageContaining("must be at most 8192 bytes, names and values together (rmq.max-headers-size;");
        assertNothingWritten();
    }

    @Test
    void limitsAreConfigurable() {
        Rmq strict = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withLimits(new MessageLimits(8, 4, 16, 2)));
        strict.defineTopic("t", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> strict.producer().send(good("a").withId("123456789")))
                .hasMessageContaining("must be at most 8 bytes (rmq.max-id-size");
        assertThatThrownBy(() -> strict.producer().send(good("a").withHeader("k", "12345")))
                .hasMessageContaining("must be at most 4 bytes (rmq.max-header-value-size");
        assertThat(strict.producer().send(good("a").withId("12345678").withHeader("k", "1234")).merged()).isFalse();
        assertThatThrownBy(() -> new MessageLimits(0, 1, 1, 1)).hasMessageContaining("maxIdBytes");
        strict.close();
    }

    @Test
    void aByteBodyStartingWithAMemberTagIsRefusedUnlessItTravelsAsThePayloadOfAnId() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 4);
        for (int tag : new int[] {0xFF, 0xFE}) {
            byte[] tagged = {(byte) tag, 1, 2};
            assertThatThrownBy(() -> rmq.producer().send(OutgoingMessage.fixedTime("t", tagged, Instant.now())))
                    .isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessageContaining("Invalid body 'starting with byte 0x" + Integer.toHexString(tag).toUpperCase()
                            + "': is reserved for stored ids and groups (0xFE, 0xFF)");
        }
        assertNothingWritten();
        for (int tag : new int[] {0xFF, 0xFE}) {
            byte[] tagged = {(byte) tag, 1, 2};
            assertThat(rmq.producer().send(OutgoingMessage.fixedTime("t", tagged, Instant.now()).withId("bin-" + tag))
                    .merged()).isFalse();
        }
    }

    @Test
    void validateRefusesWhatASendRefusesWithTheSameErrorAndWritesNothing() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 4);
        String longId = "x".repeat(300);
        for (OutgoingMessage bad : List.of(good("a").withId(longId), good("").withHeader("h", "v"),
                OutgoingMessage.fixedTime("undefined-topic", "a", Instant.now()),
                OutgoingMessage.priority("t", "a", 1))) {
            Throwable sent = org.assertj.core.api.Assertions.catchThrowable(() -> rmq.producer().send(bad));
            assertThat(sent).isInstanceOf(RmqInvalidArgumentException.class);
            assertThatThrownBy(() -> rmq.producer().validate(bad)).isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessage(sent.getMessage());
        }
        assertNothingWritten();
        int slot = rmq.producer().validate(good("b").withGroup("account-7"));
        assertNothingWritten();
        assertThat(rmq.producer().send(good("b").withGroup("account-7")).slot()).isEqualTo(slot);
    }
}
