package io.rmq.core;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JacksonInject;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.annotation.OptBoolean;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.deser.ValueDeserializerModifier;
import tools.jackson.databind.deser.bean.BeanDeserializer;
import tools.jackson.databind.deser.std.DelegatingDeserializer;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.AnnotatedField;
import tools.jackson.databind.introspect.AnnotatedMember;
import tools.jackson.databind.introspect.AnnotatedMethod;
import tools.jackson.databind.introspect.AnnotatedParameter;
import tools.jackson.databind.introspect.BeanPropertyDefinition;
import tools.jackson.databind.introspect.NopAnnotationIntrospector;
import tools.jackson.databind.module.SimpleModule;
import org.jspecify.annotations.Nullable;

/**
 * Makes the reading mapper of {@link PayloadMapping#STRICT} fail on a body that lacks a required property, instead of
 * reading it as {@code null} (the rules are {@link PayloadMapping#STRICT}'s). Creator properties are marked required
 * and null-failing through an annotation introspector placed before the application's, so Jackson's own creator
 * checks report them; Jackson does not check setter and field properties, so the deserializer of a bean-style class
 * is wrapped to look for required properties still {@code null} once the bean is read.
 */
final class StrictPayloadModule extends SimpleModule {

    private static final JsonSetter.Value FAIL_ON_NULL = JsonSetter.Value.forValueNulls(Nulls.FAIL);

    StrictPayloadModule() {
        super("rmq-strict-payloads");
    }

    @Override
    public void setupModule(SetupContext context) {
        super.setupModule(context);
        context.insertAnnotationIntrospector(new RequiredCreatorProperties());
        context.addDeserializerModifier(new RequiredBeanProperties());
    }

    /** Creator parameters of the application's (Java) classes are required unless {@link #optional} says not. */
    private static final class RequiredCreatorProperties extends NopAnnotationIntrospector {

        @Override
        public @Nullable Boolean hasRequiredMarker(MapperConfig<?> config, AnnotatedMember member) {
            return member instanceof AnnotatedParameter parameter && required(parameter) ? Boolean.TRUE : null;
        }

        @Override
        public JsonSetter.@Nullable Value findSetterInfo(MapperConfig<?> config, Annotated annotated) {
            return annotated instanceof AnnotatedParameter parameter && required(parameter) ? FAIL_ON_NULL : null;
        }

        private static boolean required(AnnotatedParameter parameter) {
            if (!checked(parameter.getDeclaringClass()) || parameter.hasAnnotation(JsonAnySetter.class)
                    || parameter.hasAnnotation(JsonUnwrapped.class)) {
                return false;
            }
            List<AnnotatedElement> elements = new ArrayList<>(2);
            List<AnnotatedType> types = new ArrayList<>(1);
            if (parameter.getOwner().getMember() instanceof Executable executable
                    && parameter.getIndex() < executable.getParameterCount()) {
                Parameter reflected = executable.getParameters()[parameter.getIndex()];
                elements.add(reflected);
                types.add(reflected.getAnnotatedType());
            }
            return !optional(parameter.getRawType(), List.of(parameter), elements, types);
        }
    }

    /** Wraps the deserializer of a bean-style class that has required setter or field properties. */
    private static final class RequiredBeanProperties extends ValueDeserializerModifier {

        @Override
        public ValueDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription.Supplier beanDesc,
                ValueDeserializer<?> deserializer) {
            if (deserializer.getClass() != BeanDeserializer.class || !checked(beanDesc.getBeanClass())) {
                return deserializer;
            }
            BeanDeserializer bean = (BeanDeserializer) deserializer;
            List<RequiredProperty> required = new ArrayList<>();
            for (BeanPropertyDefinition property : beanDesc.get().findProperties()) {
                RequiredProperty check = RequiredProperty.of(property, bean, config);
                if (check != null) {
                    required.add(check);
                }
            }
            return required.isEmpty() ? deserializer : new CheckingDeserializer(deserializer, List.copyOf(required));
        }
    }

    /**
     * A setter or field property that must not be {@code null} once its bean is read.
     *
     * @param name   its name in JSON
     * @param reader the field (preferred: reading it has no side effect) or getter it is read back through
     */
    private record RequiredProperty(String name, AnnotatedMember reader) {

        static @Nullable RequiredProperty of(BeanPropertyDefinition property, BeanDeserializer bean,
                DeserializationConfig config) {
            AnnotatedField field = property.getField();
            AnnotatedMethod setter = property.getSetter();
            AnnotatedMethod getter = property.getGetter();
            if (property.hasConstructorParameter() || (field == null && setter == null)
                    || bean.findProperty(property.getFullName()) == null || property.getRawPrimaryType().isPrimitive()) {
                return null; // a creator property (checked by Jackson), or nothing Jackson sets, or a primitive
            }
            List<Annotated> members = new ArrayList<>(3);
            List<AnnotatedElement> elements = new ArrayList<>(3);
            List<AnnotatedType> types = new ArrayList<>(3);
            if (field != null) {
                members.add(field);
                elements.add(field.getAnnotated());
                types.add(field.getAnnotated().getAnnotatedType());
            }
            if (setter != null && setter.getParameterCount() == 1) {
                members.add(setter);
                Method method = setter.getAnnotated();
                elements.add(method.getParameters()[0]);
                types.add(method.getAnnotatedParameterTypes()[0]);
            }
            if (getter != null) {
                members.add(getter);
                elements.add(getter.getAnnotated());
                types.add(getter.getAnnotated().getAnnotatedReturnType());
            }
            if (optional(property.getRawPrimaryType(), members, elements, types)) {
                return null;
            }
            AnnotatedMember reader = field != null ? field : getter;
            if (reader == null) {
                return null; // a setter alone: nothing to read the value back through
            }
            try {
                reader.fixAccess(config.isEnabled(MapperFeature.OVERRIDE_PUBLIC_ACCESS_MODIFIERS));
            }
            catch (RuntimeException ex) {
                return null; // not accessible (a module's encapsulation): unchecked rather than failing every read
            }
            return new RequiredProperty(property.getName(), reader);
        }
    }

    /** Reads the bean as the wrapped deserializer does, then fails naming the first required property left null. */
    private static final class CheckingDeserializer extends DelegatingDeserializer {

        private final List<RequiredProperty> required;

        CheckingDeserializer(ValueDeserializer<?> delegate, List<RequiredProperty> required) {
            super(delegate);
            this.required = required;
        }

        @Override
        protected ValueDeserializer<?> newDelegatingInstance(ValueDeserializer<?> newDelegatee) {
            return new CheckingDeserializer(newDelegatee, required);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws JacksonException {
            Object bean = _delegatee.deserialize(p, ctxt);
            if (bean != null) {
                for (RequiredProperty property : required) {
                    if (property.reader().getValue(bean) == null) {
                        throw JacksonException.wrapWithPath(MissingPropertyException.of(p, bean.getClass(),
                                property.name()), bean, property.name());
                    }
                }
            }
            return bean;
        }
    }

    /** A required setter or field property absent, or null, once its bean was read. */
    static final class MissingPropertyException extends MismatchedInputException {

        private static final long serialVersionUID = 1L;

        private MissingPropertyException(JsonParser p, String message, Class<?> type) {
            super(p, message, type);
        }

        static MissingPropertyException of(JsonParser p, Class<?> type, String property) {
            return new MissingPropertyException(p, "Required property '" + property + "' is missing or null", type);
        }
    }

    /** Whether the class is one whose properties are checked: not the JDK's, not Kotlin's (its module decides). */
    private static boolean checked(Class<?> type) {
        if (type.getName().startsWith("java.") || Throwable.class.isAssignableFrom(type)) {
            return false;
        }
        for (Annotation annotation : type.getDeclaredAnnotations()) {
            if (annotation.annotationType().getName().equals("kotlin.Metadata")) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a property may be absent or null: an {@code Optional} type, a {@code @Nullable} on any of its members
     * (declaration or type use), or annotations that say what absence or null becomes.
     */
    private static boolean optional(Class<?> rawType, List<? extends Annotated> members, List<AnnotatedElement> elements,
            List<AnnotatedType> types) {
        String typeName = rawType.getName();
        if (typeName.startsWith("java.util.Optional") || typeName.equals("com.google.common.base.Optional")) {
            return true;
        }
        for (Annotated member : members) {
            JsonProperty property = member.getAnnotation(JsonProperty.class);
            if (property != null && (property.isRequired() == OptBoolean.FALSE || !property.defaultValue().isEmpty())) {
                return true;
            }
            JsonSetter setter = member.getAnnotation(JsonSetter.class);
            if (member.hasAnnotation(JacksonInject.class) || (setter != null && setter.nulls() != Nulls.DEFAULT)) {
                return true;
            }
            if (member.annotations().anyMatch(StrictPayloadModule::isNullable)) {
                return true;
            }
        }
        for (AnnotatedElement element : elements) {
            for (Annotation annotation : element.getAnnotations()) {
                if (isNullable(annotation)) {
                    return true;
                }
            }
        }
        for (AnnotatedType type : types) {
            for (Annotation annotation : type.getAnnotations()) {
                if (isNullable(annotation)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean isNullable(Annotation annotation) {
        return annotation.annotationType().getSimpleName().equals("Nullable");
    }
}
