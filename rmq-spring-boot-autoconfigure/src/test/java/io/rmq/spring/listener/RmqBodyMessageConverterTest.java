package io.rmq.spring.listener;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.rmq.core.BodyCodec;
import io.rmq.spring.RmqHeaders;
import org.junit.jupiter.api.Test;
import org.springframework.core.MethodParameter;
import org.springframework.messaging.Message;
import org.springframework.messaging.converter.MessageConversionException;
import org.springframework.messaging.support.GenericMessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The converter reads the stored body as the parameter declares it, generics included. */
class RmqBodyMessageConverterTest {

    record Item(long id, String name) {
    }

    @SuppressWarnings("unused")
    void listener(Message<List<Item>> message, List<Item> items, String text) {
    }

    private final RmqBodyMessageConverter converter = new RmqBodyMessageConverter(new BodyCodec());

    private static Message<Object> message(Object payload, String body) {
        return new GenericMessage<>(payload, new RmqMessageHeaders(Map.of(RmqHeaders.BODY,
                body.getBytes(StandardCharsets.UTF_8))));
    }

    private static MethodParameter parameter(int index) throws NoSuchMethodException {
        Method method = RmqBodyMessageConverterTest.class.getDeclaredMethod("listener", Message.class, List.class,
                String.class);
        return new MethodParameter(method, index);
    }

    @Test
    void theStoredBodyBecomesTheGenericTypeOfAMessageOrAPayloadParameter() throws Exception {
        Message<Object> message = message(new byte[0], "[{\"id\":1,\"name\":\"a\"}]");
        assertThat(converter.fromMessage(message, Message.class, parameter(0))).isEqualTo(List.of(new Item(1, "a")));
        assertThat(converter.fromMessage(message, List.class, parameter(1))).isEqualTo(List.of(new Item(1, "a")));
        assertThat(converter.fromMessage(message, String.class, parameter(2))).isEqualTo("[{\"id\":1,\"name\":\"a\"}]");
    }

    @Test
    void aPayloadOfTheRightTypeIsTakenAsItIs() throws Exception {
        Message<Object> message = message("converted already", "ignored");
        assertThat(converter.fromMessage(message, String.class, parameter(2))).isSameAs(message.getPayload());
    }

    @Test
    void anUnreadableBodyFailsNamingTheTypeAndTheMessage() throws Exception {
        Message<Object> message = message(new byte[0], "not json");
        assertThatThrownBy(() -> converter.fromMessage(message, List.class, parameter(1)))
                .isInstanceOf(MessageConversionException.class)
                .hasMessageContaining("cannot convert the body to java.util.List<")
                .satisfies(ex -> assertThat(((MessageConversionException) ex).getFailedMessage()).isSameAs(message));
    }
}
