// Java values <-> the tagged JSON codec (see ../codec.py and docs/code.md): decoding is
// driven by the declared (generic) parameter type, encoding by the value's class.
import java.lang.reflect.Array;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

final class AssayCodec {
    static final int MAX_DEPTH = 100;
    static final long SAFE_INT = 1L << 53;

    static final class Unsupported extends RuntimeException {
        Unsupported(String message) { super(message); }
    }

    private static Map<String, Object> tag(String name, Object body) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put(name, body);
        return map;
    }

    @SuppressWarnings("unchecked")
    private static Map.Entry<String, Object> tagged(Object data) {
        if (data instanceof Map && ((Map<String, Object>) data).size() == 1) {
            return ((Map<String, Object>) data).entrySet().iterator().next();
        }
        return null;
    }

    private static String tagName(Object data) {
        Map.Entry<String, Object> entry = tagged(data);
        return entry == null ? "" : entry.getKey();
    }

    private static Object body(Object data) {
        return tagged(data).getValue();
    }

    // -- decoding ---------------------------------------------------------------------
    static Object decode(Object data, Type type, int depth) {
        if (depth > MAX_DEPTH) throw new IllegalArgumentException("value nested too deeply");
        if (type instanceof WildcardType) type = ((WildcardType) type).getUpperBounds()[0];
        Class<?> raw = rawClass(type);
        Type[] params = type instanceof ParameterizedType ? ((ParameterizedType) type).getActualTypeArguments() : new Type[0];
        if (raw == Optional.class) {
            return data == null ? Optional.empty() : Optional.of(decode(data, param(params, 0), depth + 1));
        }
        if (data == null) {
            if (raw.isPrimitive()) throw mismatch(data, type);
            return null;
        }
        if (raw == Object.class) return decodeAny(data, depth);
        if (raw == boolean.class || raw == Boolean.class) return expect(data, Boolean.class, type);
        if (raw == String.class) return expect(data, String.class, type);
        if (raw == char.class || raw == Character.class) {
            String text = expect(data, String.class, type);
            if (text.length() != 1) throw new IllegalArgumentException("a Java char needs a one-character string");
            return text.charAt(0);
        }
        if (raw == double.class || raw == Double.class) return number(data, type);
        if (raw == float.class || raw == Float.class) return (float) number(data, type);
        if (raw == BigInteger.class) return integer(data, type);
        if (raw == long.class || raw == Long.class) return ranged(data, type, Long.MIN_VALUE, Long.MAX_VALUE);
        if (raw == int.class || raw == Integer.class) return (int) ranged(data, type, Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (raw == short.class || raw == Short.class) return (short) ranged(data, type, Short.MIN_VALUE, Short.MAX_VALUE);
        if (raw == byte.class || raw == Byte.class) return (byte) ranged(data, type, Byte.MIN_VALUE, Byte.MAX_VALUE);
        if (raw.isArray()) return decodeArray(data, raw, type, depth);
        if (Map.class.isAssignableFrom(raw)) return decodeMap(data, params, type, depth);
        if (Set.class.isAssignableFrom(raw)) return new LinkedHashSet<>(decodeItems(data, param(params, 0), type, depth));
        if (Collection.class.isAssignableFrom(raw) || raw == Iterable.class) return decodeItems(data, param(params, 0), type, depth);
        throw new IllegalArgumentException("a Java " + type.getTypeName() + " cannot be passed as data");
    }

    private static Type param(Type[] params, int index) {
        return index < params.length ? params[index] : Object.class;
    }

    private static Class<?> rawClass(Type type) {
        if (type instanceof Class) return (Class<?>) type;
        if (type instanceof ParameterizedType) return (Class<?>) ((ParameterizedType) type).getRawType();
        return Object.class;
    }

    private static IllegalArgumentException mismatch(Object data, Type type) {
        String kind = data == null ? "None" : data instanceof List ? "a list" : data instanceof Map ? "a " + tagName(data).replace("$", "") : "a " + data.getClass().getSimpleName();
        return new IllegalArgumentException("cannot pass " + kind + " as a Java " + type.getTypeName());
    }

    private static <T> T expect(Object data, Class<T> kind, Type type) {
        if (!kind.isInstance(data)) throw mismatch(data, type);
        return kind.cast(data);
    }

    private static BigInteger integer(Object data, Type type) {
        if (data instanceof Long) return BigInteger.valueOf((Long) data);
        if (data instanceof BigInteger) return (BigInteger) data;
        if (tagName(data).equals("$int")) {
            String text = (String) body(data);
            boolean negative = text.startsWith("-");
            BigInteger value = new BigInteger(negative ? text.substring(1) : text, 16);
            return negative ? value.negate() : value;
        }
        throw mismatch(data, type);
    }

    private static long ranged(Object data, Type type, long low, long high) {
        BigInteger value = integer(data, type);
        if (value.compareTo(BigInteger.valueOf(low)) < 0 || value.compareTo(BigInteger.valueOf(high)) > 0) {
            throw new IllegalArgumentException(value + " does not fit in a Java " + type.getTypeName());
        }
        return value.longValue();
    }

    private static double number(Object data, Type type) {
        if (data instanceof Double) return (Double) data;
        if (tagName(data).equals("$float32")) return number(body(data), type);
        if (tagName(data).equals("$float")) {
            String text = String.valueOf(body(data));
            return text.equals("nan") ? Double.NaN : text.equals("inf") ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
        }
        return integer(data, type).doubleValue();
    }

    @SuppressWarnings("unchecked")
    private static List<Object> sequence(Object data, Type type) {
        if (data instanceof List) return (List<Object>) data;
        String name = tagName(data);
        if (name.equals("$tuple") || name.equals("$set") || name.equals("$frozenset")) return (List<Object>) body(data);
        throw mismatch(data, type);
    }

    private static List<Object> decodeItems(Object data, Type element, Type type, int depth) {
        List<Object> items = new ArrayList<>();
        for (Object item : sequence(data, type)) items.add(decode(item, element, depth + 1));
        return items;
    }

    private static Object decodeArray(Object data, Class<?> raw, Type type, int depth) {
        if (raw == byte[].class && tagName(data).equals("$bytes")) return Base64.getDecoder().decode((String) body(data));
        List<Object> items = sequence(data, type);
        Object array = Array.newInstance(raw.getComponentType(), items.size());
        for (int i = 0; i < items.size(); i++) Array.set(array, i, decode(items.get(i), raw.getComponentType(), depth + 1));
        return array;
    }

    @SuppressWarnings("unchecked")
    private static Map<Object, Object> decodeMap(Object data, Type[] params, Type type, int depth) {
        if (!tagName(data).equals("$dict")) throw mismatch(data, type);
        Map<Object, Object> map = new LinkedHashMap<>();
        for (Object item : (List<Object>) body(data)) {
            List<Object> pair = (List<Object>) item;
            map.put(decode(pair.get(0), param(params, 0), depth + 1), decode(pair.get(1), param(params, 1), depth + 1));
        }
        return map;
    }

    @SuppressWarnings("unchecked")
    private static Object decodeAny(Object data, int depth) {
        if (depth > MAX_DEPTH) throw new IllegalArgumentException("value nested too deeply");
        if (data == null || data instanceof Boolean || data instanceof String || data instanceof Double) return data;
        if (data instanceof Long) {
            long value = (Long) data;
            return value == (int) value ? (Object) (int) value : (Object) value;
        }
        if (data instanceof List) {
            List<Object> items = new ArrayList<>();
            for (Object item : (List<Object>) data) items.add(decodeAny(item, depth + 1));
            return items;
        }
        String name = tagName(data);
        switch (name) {
            case "$int": return integer(data, Object.class);
            case "$float": case "$float32": return number(data, Object.class);
            case "$tuple": return decodeAny(body(data), depth);
            case "$bytes": return Base64.getDecoder().decode((String) body(data));
            case "$set": case "$frozenset": return new HashSet<>((List<Object>) decodeAny(body(data), depth));
            case "$dict": return decodeMap(data, new Type[0], Map.class, depth);
            default: throw new IllegalArgumentException("unsupported value tag " + name + " in Java");
        }
    }

    // -- encoding -----------------------------------------------------------------------
    static Object encode(Object value, int depth) {
        if (depth > MAX_DEPTH) throw new Unsupported("value is nested more than " + MAX_DEPTH + " levels deep (or contains itself)");
        if (value == null || value instanceof Boolean || value instanceof String) return value;
        if (value instanceof Character) return value.toString();
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return encodeInteger(BigInteger.valueOf(((Number) value).longValue()));
        }
        if (value instanceof BigInteger) return encodeInteger((BigInteger) value);
        if (value instanceof Float) return encodeFloat32((Float) value);
        if (value instanceof Double) return encodeFloat((Double) value);
        if (value instanceof Optional) return encode(((Optional<?>) value).orElse(null), depth + 1);
        if (value instanceof byte[]) return tag("$bytes", Base64.getEncoder().encodeToString((byte[]) value));
        if (value.getClass().isArray()) {
            List<Object> items = new ArrayList<>();
            for (int i = 0; i < Array.getLength(value); i++) items.add(encode(Array.get(value, i), depth + 1));
            return items;
        }
        if (value instanceof Set) return tag("$set", encodeAll((Collection<?>) value, depth));
        if (value instanceof Collection) return encodeAll((Collection<?>) value, depth);
        if (value instanceof Map) {
            List<Object> pairs = new ArrayList<>();
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                pairs.add(Arrays.asList(encode(entry.getKey(), depth + 1), encode(entry.getValue(), depth + 1)));
            }
            return tag("$dict", pairs);
        }
        if (value.getClass().isRecord()) return encodeRecord(value, depth);
        throw new Unsupported("a value of type " + value.getClass().getName() + " is not plain data");
    }

    private static List<Object> encodeAll(Collection<?> items, int depth) {
        List<Object> out = new ArrayList<>();
        for (Object item : items) out.add(encode(item, depth + 1));
        return out;
    }

    private static Object encodeRecord(Object value, int depth) {
        List<Object> pairs = new ArrayList<>();
        for (RecordComponent component : value.getClass().getRecordComponents()) {
            try {
                component.getAccessor().setAccessible(true);
                List<Object> pair = new ArrayList<>();
                pair.add(component.getName());
                pair.add(encode(component.getAccessor().invoke(value), depth + 1));
                pairs.add(pair);
            } catch (ReflectiveOperationException error) {
                throw new Unsupported("record component " + component.getName() + " cannot be read");
            }
        }
        return tag("$dict", pairs);
    }

    private static Object encodeInteger(BigInteger value) {
        if (value.bitLength() < 63 && Math.abs(value.longValue()) < SAFE_INT) return value.longValue();
        String sign = value.signum() < 0 ? "-" : "";
        return tag("$int", sign + value.abs().toString(16));
    }

    // A float crosses as the double of its shortest decimal (0.1f as 0.1, not its widening
    // 0.100000001490116...), tagged so the parent compares it at float32 precision.
    private static Object encodeFloat32(Float value) {
        if (value.isNaN() || value.isInfinite()) return encodeFloat(value.doubleValue());
        return tag("$float32", Double.parseDouble(value.toString()));
    }

    private static Object encodeFloat(double value) {
        if (Double.isNaN(value)) return tag("$float", "nan");
        if (Double.isInfinite(value)) return tag("$float", value > 0 ? "inf" : "-inf");
        return value;
    }
}
