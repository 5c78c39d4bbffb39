package io.rmq.spring.schedule;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.spring.annotation.RmqScheduled;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.jspecify.annotations.Nullable;

/**
 * Finds {@code @RmqScheduled} methods on beans as they are made and keeps them as declarations (attributes with
 * {@code ${...}} resolved), which {@link RmqScheduler} checks and runs at start. Written while beans are made (one
 * thread, the container's), read at start.
 */
public class RmqScheduledAnnotationBeanPostProcessor implements BeanPostProcessor, BeanFactoryAware {

    private final List<ScheduleDeclaration> declarations = new CopyOnWriteArrayList<>();
    private @Nullable ConfigurableBeanFactory beanFactory;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ConfigurableBeanFactory configurable ? configurable : null;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        if (!AnnotationUtils.isCandidateClass(targetClass, RmqScheduled.class)) {
            return bean;
        }
        Map<Method, RmqScheduled> methods = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<RmqScheduled>) m -> AnnotatedElementUtils.findMergedAnnotation(m,
                        RmqScheduled.class));
        methods.forEach((method, annotation) -> declarations.add(declaration(bean, beanName, targetClass, method,
                annotation)));
        return bean;
    }

    private ScheduleDeclaration declaration(Object bean, String beanName, Class<?> targetClass, Method method,
            RmqScheduled annotation) {
        String where = "bean '" + beanName + "' method " + targetClass.getSimpleName() + "." + method.getName();
        String name = resolve(annotation.name());
        if (name.isEmpty()) {
            name = targetClass.getSimpleName() + "." + method.getName();
        }
        String scheduleName = name;
        java.util.function.Function<String, String> field = attribute -> ScheduleDeclaration.annotationField(
                scheduleName, attribute, where);
        Duration fixedRate = duration(resolve(annotation.fixedRate()), field.apply("fixedRate"));
        Duration threshold = duration(resolve(annotation.misfireThreshold()), field.apply("misfireThreshold"));
        String misfireText = resolve(annotation.misfire());
        MisfirePolicy misfire = null;
        if (!misfireText.isEmpty()) {
            try {
                misfire = MisfirePolicy.parse(misfireText);
            }
            catch (IllegalArgumentException ex) {
                throw new RmqInvalidArgumentException(field.apply("misfire"), misfireText,
                        ex.getMessage());
            }
        }
        return new ScheduleDeclaration(name, false, where, blankToNull(resolve(annotation.cron())),
                blankToNull(resolve(annotation.zone())), fixedRate, misfire, threshold, null, null, bean, method);
    }

    private static @Nullable Duration duration(String text, String field) {
        if (text.isEmpty()) {
            return null;
        }
        try {
            return DurationStyle.detectAndParse(text);
        }
        catch (IllegalArgumentException ex) {
            throw new RmqInvalidArgumentException(field, text, "must be a duration: 30s, PT30S or milliseconds"
                    + " (30000)");
        }
    }

    private static @Nullable String blankToNull(String text) {
        return text.isBlank() ? null : text;
    }

    private String resolve(String value) {
        ConfigurableBeanFactory factory = beanFactory;
        String resolved = factory == null || value.isEmpty() ? value : factory.resolveEmbeddedValue(value);
        return resolved == null ? "" : resolved.trim();
    }

    /** The {@code @RmqScheduled} methods found so far. */
    public List<ScheduleDeclaration> declarations() {
        return List.copyOf(declarations);
    }
}
