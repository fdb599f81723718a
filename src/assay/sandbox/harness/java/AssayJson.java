// Minimal JSON for the frame protocol (the JDK has none): parse to null, Boolean,
// Long/BigInteger/Double, String, List, and LinkedHashMap; write those back.
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class AssayJson {
    private final String text;
    private int at;

    private AssayJson(String text) { this.text = text; }

    /** One frame on {@code out}: a 4-byte big-endian length, then the JSON. */
    static void writeFrame(OutputStream out, Map<String, Object> message) throws IOException {
        byte[] body = write(message).getBytes(StandardCharsets.UTF_8);
        byte[] frame = new byte[4 + body.length];
        frame[0] = (byte) (body.length >>> 24);
        frame[1] = (byte) (body.length >>> 16);
        frame[2] = (byte) (body.length >>> 8);
        frame[3] = (byte) body.length;
        System.arraycopy(body, 0, frame, 4, body.length);
        out.write(frame);
        out.flush();
    }

    static Object parse(String text) {
        AssayJson parser = new AssayJson(text);
        Object value = parser.value(0);
        parser.space();
        if (parser.at != text.length()) throw new IllegalArgumentException("trailing data in frame");
        return value;
    }

    private void space() {
        while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) at++;
    }

    private Object value(int depth) {
        if (depth > 200) throw new IllegalArgumentException("frame nested too deeply");
        space();
        char c = text.charAt(at);
        switch (c) {
            case '{': return object(depth);
            case '[': return array(depth);
            case '"': return string();
            case 't': at += 4; return Boolean.TRUE;
            case 'f': at += 5; return Boolean.FALSE;
            case 'n': at += 4; return null;
            default: return number();
        }
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        space();
        if (text.charAt(at) == '}') { at++; return map; }
        while (true) {
            space();
            String key = string();
            space();
            at++; // ':'
            map.put(key, value(depth + 1));
            space();
            if (text.charAt(at++) == '}') return map;
        }
    }

    private List<Object> array(int depth) {
        List<Object> list = new ArrayList<>();
        at++;
        space();
        if (text.charAt(at) == ']') { at++; return list; }
        while (true) {
            list.add(value(depth + 1));
            space();
            if (text.charAt(at++) == ']') return list;
        }
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        at++;
        while (true) {
            char c = text.charAt(at++);
            if (c == '"') return out.toString();
            if (c != '\\') { out.append(c); continue; }
            char e = text.charAt(at++);
            switch (e) {
                case 'n': out.append('\n'); break;
                case 't': out.append('\t'); break;
                case 'r': out.append('\r'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'u': out.append((char) Integer.parseInt(text.substring(at, at + 4), 16)); at += 4; break;
                default: out.append(e);
            }
        }
    }

    private Object number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
        String digits = text.substring(start, at);
        if (digits.isEmpty()) throw new IllegalArgumentException("bad JSON at " + start);
        if (digits.contains(".") || digits.contains("e") || digits.contains("E")) return Double.valueOf(digits);
        BigInteger big = new BigInteger(digits);
        return big.bitLength() < 64 ? (Object) big.longValue() : big;
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void write(Object value, StringBuilder out) {
        if (value == null) out.append("null");
        else if (value instanceof Boolean || value instanceof Long || value instanceof BigInteger) out.append(value);
        else if (value instanceof Double) out.append(Double.toString((Double) value)); // always has '.' or 'E'
        else if (value instanceof String) quote((String) value, out);
        else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<Object>) value) {
                if (!first) out.append(',');
                first = false;
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> entry : ((Map<String, Object>) value).entrySet()) {
                if (!first) out.append(',');
                first = false;
                quote(entry.getKey(), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else throw new IllegalArgumentException("not JSON: " + value.getClass());
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        out.append('"');
    }
}
