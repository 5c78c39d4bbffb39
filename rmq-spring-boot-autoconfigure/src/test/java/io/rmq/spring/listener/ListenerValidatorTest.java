package io.rmq.spring.listener;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

import static org.assertj.core.api.Assertions.assertThat;

/** Which Validator checks @Valid / @Validated listener payloads. */
class ListenerValidatorTest {

    static class NamedValidator implements Validator {
        @Override
        public boolean supports(Class<?> type) {
            return true;
        }

        @Override
        public void validate(Object target, Errors errors) {
        }
    }

    private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();

    @Test
    void noValidatorMeansNoValidation() {
        assertThat(RmqListenerAnnotationBeanPostProcessor.validator(beans)).isNull();
    }

    @Test
    void theApplicationsOnlyValidatorIsUsed() {
        Validator own = new NamedValidator();
        beans.registerSingleton("priceValidator", own);
        assertThat(RmqListenerAnnotationBeanPostProcessor.validator(beans)).isSameAs(own);
    }

    @Test
    void bootsDefaultValidatorIsUsedBesideTheWebAdaptersThatWrapIt() {
        Validator defaultValidator = new NamedValidator();
        beans.registerSingleton("defaultValidator", defaultValidator);
        beans.registerSingleton("mvcValidator", new NamedValidator());
        assertThat(RmqListenerAnnotationBeanPostProcessor.validator(beans)).isSameAs(defaultValidator);
        beans.registerSingleton("anotherValidator", new NamedValidator());
        assertThat(RmqListenerAnnotationBeanPostProcessor.validator(beans)).isSameAs(defaultValidator);
    }

    @Test
    void severalValidatorsWithoutBootsDefaultMeanNoValidation() {
        beans.registerSingleton("a", new NamedValidator());
        beans.registerSingleton("b", new NamedValidator());
        assertThat(RmqListenerAnnotationBeanPostProcessor.validator(beans)).isNull();
    }
}
