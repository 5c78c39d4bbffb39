package io.rmq.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.OptBoolean;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@link PayloadMapping#STRICT} requires of a body, and that {@link PayloadMapping#LENIENT} reads as before. */
class PayloadMappingTest {

    /** As Spring Boot's mapper: unknown properties ignored (Jackson 3's default as well). */
    private static final JsonMapper APPLICATION = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    private final BodyCodec strict = new BodyCodec(APPLICATION, PayloadMapping.STRICT);
    private final BodyCodec lenient = new BodyCodec(APPLICATION, PayloadMapping.LENIENT);

    public record OrderRef(String id) {
    }

    public record Order(long number, String customer, Optional<String> note, @Nullable String coupon,
            @JsonProperty(isRequired = OptBoolean.FALSE) String channel) {
    }

    public record Envelope<T>(String kind, T item) {
    }

    public record Customer(String name) {
    }

    public record Shipment(Customer customer, List<OrderRef> orders) {
    }

    /** A class with a creator: its parameters are required as a record's components are. */
    public static final class Refund {
        private final String orderId;
        private final @Nullable String reason;

        @JsonCreator
        public Refund(@JsonProperty("orderId") String orderId, @JsonProperty("reason") @Nullable String reason) {
            this.orderId = orderId;
            this.reason = reason;
        }

        public String getOrderId() {
            return orderId;
        }

        public @Nullable String getReason() {
            return reason;
        }
    }

    /** A bean: what is still null once read is missing, unless nullable; initial values are defaults. */
    public static class Invoice {
        private String number;
        private String currency = "EUR";
        private @Nullable String memo;
        private int copies;

        public String getNumber() {
            return number;
        }

        public void setNumber(String number) {
            this.number = number;
        }

        public String getCurrency() {
            return currency;
        }

        public void setCurrency(String currency) {
            this.currency = currency;
        }

        public @Nullable String getMemo() {
            return memo;
        }

        public void setMemo(@Nullable String memo) {
            this.memo = memo;
        }

        public int getCopies() {
            return copies;
        }

        public void setCopies(int copies) {
            this.copies = copies;
        }
    }

    /** Public fields, no accessors. */
    public static class Ticket {
        public String code;
    }

    private static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static RmqPayloadMismatchException mismatch(BodyCodec codec, String body, java.lang.reflect.Type type) {
        try {
            codec.decode(json(body), type);
        }
        catch (RmqPayloadMismatchException ex) {
            return ex;
        }
        throw new AssertionError(body + " was read as " + type.getTypeName() + " without a mismatch");
    }

    @Test
    void aRecordLackingAComponentFailsNamingTheTypeAndTheProperty() {
        RmqPayloadMismatchException ex = mismatch(strict, "{\"orderId\":7}", OrderRef.class);
        assertThat(ex).hasMessage("payload does not match " + OrderRef.class.getName()
                + ": missing required property 'id'");
        assertThat(ex.property()).isEqualTo("id");
        assertThat(ex.payloadType()).isEqualTo(OrderRef.class);
        assertThat(ex.reason(json("{\"orderId\":7}"), 200)).isEqualTo("payload {\"orderId\":7} does not match "
                + OrderRef.class.getName() + ": missing required property 'id'");
        assertThat(ex.reason(json("{\"orderId\":7}"), 0)).isEqualTo("payload of 13 bytes does not match "
                + OrderRef.class.getName() + ": missing required property 'id'");
    }

    @Test
    void aNullComponentFailsAsWell() {
        assertThat(mismatch(strict, "{\"id\":null}", OrderRef.class).problem())
                .isEqualTo("required property 'id' is null");
    }

    @Test
    void aPrimitiveComponentIsRequiredTooButOptionalNullableAndNotRequiredOnesMayBeAbsent() {
        assertThat(mismatch(strict, "{\"customer\":\"c\"}", Order.class).problem())
                .isEqualTo("missing required property 'number'");
        assertThat(mismatch(strict, "{\"number\":1}", Order.class).problem())
                .isEqualTo("missing required property 'customer'");
        assertThat(strict.<Order>decode(json("{\"number\":1,\"customer\":\"c\"}"), Order.class))
                .isEqualTo(new Order(1, "c", Optional.empty(), null, null));
        assertThat(strict.<Order>decode(json("{\"number\":1,\"customer\":\"c\",\"note\":null,\"coupon\":null}"),
                Order.class)).isEqualTo(new Order(1, "c", Optional.empty(), null, null));
    }

    @Test
    void anUnknownPropertyBesideTheRequiredOnesIsAccepted() {
        assertThat(strict.<OrderRef>decode(json("{\"id\":\"o-1\",\"extra\":true}"), OrderRef.class))
                .isEqualTo(new OrderRef("o-1"));
    }

    @Test
    void aPropertyOfTheWrongShapeFailsNamingItWithoutQuotingTheBody() {
        assertThat(mismatch(strict, "{\"customer\":\"SECRET\",\"orders\":[]}", Shipment.class).problem())
                .isEqualTo("property 'customer' has the wrong shape: a string where Customer is expected");
        assertThat(mismatch(strict, "{\"id\":{\"SECRET\":1}}", OrderRef.class).problem())
                .isEqualTo("property 'id' has the wrong shape: an object where String is expected");
        assertThat(mismatch(strict, "\"SECRET\"", OrderRef.class).problem())
                .isEqualTo("the body has the wrong shape: a string where OrderRef is expected");
        assertThat(mismatch(strict, "{\"number\":\"SECRET\",\"customer\":\"c\"}", Order.class).problem())
                .isEqualTo("property 'number' has the wrong shape: a string where long is expected");
        assertThat(mismatch(lenient, "{\"customer\":\"SECRET\",\"orders\":[]}", Shipment.class))
                .hasMessageNotContaining("SECRET");
    }

    @Test
    void aClassWithACreatorRequiresItsParametersAsARecordDoes() {
        assertThat(mismatch(strict, "{\"id\":7}", Refund.class).problem())
                .isEqualTo("missing required property 'orderId'");
        Refund refund = strict.decode(json("{\"orderId\":\"o-1\"}"), Refund.class);
        assertThat(refund.getOrderId()).isEqualTo("o-1");
        assertThat(refund.getReason()).isNull();
    }

    @Test
    void aBeanRequiresWhatItLeavesNullUnlessNullable() {
        assertThat(mismatch(strict, "{\"id\":7}", Invoice.class).problem())
                .isEqualTo("required property 'number' is missing or null");
        assertThat(mismatch(strict, "{\"number\":null}", Invoice.class).problem())
                .isEqualTo("required property 'number' is missing or null");
        assertThat(mismatch(strict, "{\"number\":\"n-1\",\"currency\":null}", Invoice.class).problem())
                .isEqualTo("required property 'currency' is missing or null");
        Invoice invoice = strict.decode(json("{\"number\":\"n-1\"}"), Invoice.class);
        assertThat(invoice.getNumber()).isEqualTo("n-1");
        assertThat(invoice.getCurrency()).isEqualTo("EUR"); // its initial value: a default, not missing
        assertThat(invoice.getMemo()).isNull();
        assertThat(invoice.getCopies()).isZero(); // a primitive cannot tell absent from 0: not checked
        assertThat(mismatch(strict, "{\"ticket\":1}", Ticket.class).problem())
                .isEqualTo("required property 'code' is missing or null");
    }

    @Test
    void genericPayloadsApplyTheRulesToTheirElementsAndNameWhereTheMismatchIs() {
        assertThat(mismatch(strict, "[{\"id\":\"a\"},{\"orderId\":7}]", new TypeReference<List<OrderRef>>() { }
                .getType()).problem()).isEqualTo("missing required property '[1].id'");
        assertThat(mismatch(strict, "{\"a\":{\"id\":\"a\"},\"b\":{}}", new TypeReference<Map<String, OrderRef>>() { }
                .getType()).problem()).isEqualTo("missing required property 'b.id'");
        java.lang.reflect.Type envelope = new TypeReference<Envelope<OrderRef>>() { }.getType();
        RmqPayloadMismatchException ex = mismatch(strict, "{\"kind\":\"ref\",\"item\":{\"orderId\":7}}", envelope);
        assertThat(ex.problem()).isEqualTo("missing required property 'item.id'");
        assertThat(ex).hasMessageStartingWith("payload does not match " + envelope.getTypeName() + ":");
        assertThat(mismatch(strict, "{\"kind\":\"ref\"}", envelope).problem())
                .isEqualTo("missing required property 'item'");
        assertThat(mismatch(strict, "{\"kind\":\"i\",\"item\":{\"currency\":\"EUR\"}}",
                new TypeReference<Envelope<Invoice>>() { }.getType()).problem())
                .isEqualTo("required property 'item.number' is missing or null");
        assertThat(mismatch(strict, "{\"customer\":{\"name\":\"c\"},\"orders\":[{\"id\":\"a\"},{\"x\":1}]}",
                Shipment.class).problem()).isEqualTo("missing required property 'orders[1].id'");
        assertThat(strict.<List<OrderRef>>decode(json("[{\"id\":\"a\"}]"),
                new TypeReference<List<OrderRef>>() { }.getType())).containsExactly(new OrderRef("a"));
    }

    @Test
    void lenientReadsAsTheApplicationsMapperDoes() {
        assertThat(lenient.<OrderRef>decode(json("{\"orderId\":7}"), OrderRef.class)).isEqualTo(new OrderRef(null));
        assertThat(lenient.<Envelope<OrderRef>>decode(json("{\"kind\":\"k\"}"),
                new TypeReference<Envelope<OrderRef>>() { }.getType())).isEqualTo(new Envelope<>("k", null));
        assertThat(lenient.<Invoice>decode(json("{}"), Invoice.class).getNumber()).isNull();
        assertThat(new BodyCodec(APPLICATION).payloadMapping()).isEqualTo(PayloadMapping.LENIENT);
    }

    @Test
    void theApplicationsNamingStrategyStillApplies() {
        JsonMapper snake = APPLICATION.rebuild().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
        BodyCodec codec = new BodyCodec(snake, PayloadMapping.STRICT);
        assertThat(codec.<Envelope<OrderRef>>decode(json("{\"kind\":\"k\",\"item\":{\"id\":\"a\"}}"),
                new TypeReference<Envelope<OrderRef>>() { }.getType())).isEqualTo(new Envelope<>("k", new OrderRef("a")));
        assertThat(mismatch(codec, "{\"number\":1}", Order.class).problem())
                .isEqualTo("missing required property 'customer'");
        assertThat(mismatch(codec, "{}", Invoice.class).problem())
                .isEqualTo("required property 'number' is missing or null");
    }

    @Test
    void sendingIsTheSameEitherWay() {
        Order order = new Order(1, "c", Optional.of("n"), null, "web");
        assertThat(strict.encode(order)).isEqualTo(lenient.encode(order));
        assertThat(strict.<Order>decode(strict.encode(order), Order.class)).isEqualTo(order);
    }
}
